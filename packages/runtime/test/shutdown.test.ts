import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// An OTLP/HTTP receiver that keeps what it is sent.
let receiver: Server;
let endpoint: string;
const bodies: string[] = [];

beforeAll(async () => {
  receiver = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      bodies.push(Buffer.concat(chunks).toString('utf8'));
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end('{}');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  endpoint = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => receiver.close(() => resolve())));

/** Runs the fixture service to its exit; its status. */
function runService(env: Record<string, string>): Promise<number | null> {
  const child = spawn(
    process.execPath,
    [
      '--conditions=@hopline/source',
      '--import',
      'tsx',
      fileURLToPath(new URL('./fixtures/stopping-service.ts', import.meta.url)),
    ],
    {
      env: {
        ...process.env,
        OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        // Nothing is exported on the batch's schedule: only a flush sends the span.
        OTEL_BSP_SCHEDULE_DELAY: '60000',
        ...env,
      },
      stdio: 'ignore',
    },
  );
  return new Promise((resolve) => child.once('exit', resolve));
}

describe('runtime - shutdown on a signal', () => {
  it('shutdown - a stop that returns exits 0 after its spans are exported', async () => {
    bodies.length = 0;
    expect(await runService({})).toBe(0);
    expect(bodies.join('\n')).toContain('"name":"last work before the signal"');
  });

  it('shutdown - a stop that hangs past the watchdog exits 1, its spans still exported', async () => {
    bodies.length = 0;
    expect(await runService({ STOP_HANGS: '1' })).toBe(1);
    expect(bodies.join('\n')).toContain('"name":"last work before the signal"');
  });
});
