import { createServer, connect, type Server, type Socket } from 'node:net';
import { once } from 'node:events';

/**
 * A TCP proxy to a local server whose reading from that server can be stopped: a client that
 * stopped reading, as the server sees it (its socket's send buffer fills, its writes wait),
 * while the client's own library keeps working. HTTP/2 clients such as grpc-js take whatever
 * arrives whether or not the caller reads, so pausing the call alone does not show a stall.
 */
export interface StallingProxy {
  /** `host:port` to dial instead of the server's. */
  address: string;
  /** Stops reading from the server on every open connection. */
  stall(): void;
  /** Reads from the server again. */
  resume(): void;
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

export async function startStallingProxy(targetPort: number, targetHost = '127.0.0.1'): Promise<StallingProxy> {
  const upstreams = new Set<Socket>();
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = connect(targetPort, targetHost);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('error', () => socket.destroy());
      socket.on('close', () => sockets.delete(socket));
    }
    upstreams.add(upstream);
    upstream.on('close', () => upstreams.delete(upstream));
    client.pipe(upstream);
    // Not a pipe: a pipe resumes its source on the client's drain, which would undo a stall.
    upstream.on('data', (chunk: Buffer) => client.write(chunk));
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  const close = async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return {
    address: `127.0.0.1:${port}`,
    stall() {
      for (const upstream of upstreams) upstream.pause();
    },
    resume() {
      for (const upstream of upstreams) upstream.resume();
    },
    close,
    [Symbol.asyncDispose]: close,
  };
}
