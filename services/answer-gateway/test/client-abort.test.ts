import { connect } from 'node:net';
import { createLogger } from '@hopline/telemetry';
import { describe, expect, it, vi } from 'vitest';
import { startTestGateway } from './support/harness.js';

describe('answer-gateway - a client that goes away', () => {
  it('gateway - a client that aborts while sending its body is logged at info, not as a failed request', async () => {
    const lines: Array<Record<string, unknown>> = [];
    const logger = createLogger('answer-gateway', {
      level: 'debug',
      destination: { write: (line) => lines.push(JSON.parse(line) as Record<string, unknown>) },
    });
    await using t = await startTestGateway({ logger });
    const { port } = new URL(t.baseUrl);

    const socket = connect(Number(port), '127.0.0.1');
    await new Promise<void>((resolve) => socket.once('connect', resolve));
    socket.write(
      [
        'POST /v1/ask HTTP/1.1',
        'Host: 127.0.0.1',
        `Authorization: Bearer ${t.keys.alice.key}`,
        'Content-Type: application/json',
        'Content-Length: 1000',
        // The server answers 100 Continue as it hands the request to the gateway's handler.
        'Expect: 100-continue',
        '',
        '',
      ].join('\r\n'),
    );
    await new Promise<void>((resolve) => socket.once('data', () => resolve()));
    socket.write('{"question": "Who own');
    socket.destroy();

    await vi.waitFor(() => expect(lines.some((line) => line.route === 'POST /v1/ask')).toBe(true));
    expect(lines.filter((line) => line.route === 'POST /v1/ask')).toEqual([
      expect.objectContaining({ level: 'info', msg: 'client closed the request' }),
    ]);
    expect(t.reasoner.asks).toHaveLength(0);
  });
});
