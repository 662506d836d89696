import { createServer } from 'node:net';

/**
 * A TCP port on 127.0.0.1 that nothing listens on right now. The OS picks it, so parallel
 * test files do not collide; a caller that loses the race to another process retries.
 */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      if (address === null || typeof address === 'string') {
        server.close();
        reject(new Error('freePort: the OS returned no TCP address'));
        return;
      }
      server.close(() => resolve(address.port));
    });
  });
}
