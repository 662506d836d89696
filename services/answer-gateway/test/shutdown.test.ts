import { connect } from 'node:net';
import * as grpc from '@grpc/grpc-js';
import { loadHoplineGrpc, type QaEvent__Output } from '@hopline/contracts';
import { waitFor } from '@hopline/test-support';
import { describe, expect, it } from 'vitest';
import { twoHopScript } from './support/fake-reasoner.js';
import { askJson, askSse, startTestGateway } from './support/harness.js';

describe('answer-gateway graceful shutdown', () => {
  it('refuses new questions but lets running ones finish within the grace period', async () => {
    await using t = await startTestGateway({ script: twoHopScript({ gated: true }) });
    const running = await askSse(t.baseUrl, t.keys.alice, { question: 'Who owns Atlas?' });
    await waitFor(() => running.events.length >= 1);
    const stopped = t.gateway.stop({ graceMs: 10_000 });
    expect(t.gateway.health().ok).toBe(false);

    const refused = await askJson(t.baseUrl, t.keys.bob, { question: 'Who owns Atlas?' }).catch(
      (error: unknown) => error,
    );
    // Either the listener is already closed, or the request reached a kept-alive connection and was refused.
    if (refused instanceof Response) {
      expect(refused.status).toBe(503);
      expect(await refused.json()).toMatchObject({ type: 'urn:hopline:problem:shutting-down' });
    } else {
      expect(refused).toBeInstanceOf(TypeError);
    }

    await waitFor(() => {
      t.reasoner.releaseAll();
      return running.events.at(-1)?.name === 'done';
    });
    await stopped;
    await running.ended;
    expect(running.events.filter((event) => event.name === 'error')).toHaveLength(0);
    expect(t.reasoner.asks).toHaveLength(1);
  });

  it('ends questions still running after the grace period with a retryable error event on both transports, and cancels them downstream', async () => {
    await using t = await startTestGateway({ script: twoHopScript({ gated: true }) });
    const sse = await askSse(t.baseUrl, t.keys.alice, { question: 'Who owns Atlas?' });
    const { AnswerGateway } = loadHoplineGrpc().hopline.v1;
    const client = new AnswerGateway(t.grpcAddress, grpc.credentials.createInsecure());
    const metadata = new grpc.Metadata();
    metadata.set('authorization', `Bearer ${t.keys.carol.key}`);
    const call = client.ask({ question: 'Who owns Atlas?' }, metadata);
    const grpcEvents: QaEvent__Output[] = [];
    call.on('data', (event: QaEvent__Output) => grpcEvents.push(event));
    const grpcStatus = new Promise<grpc.StatusObject>((resolve) => call.on('status', resolve));
    call.on('error', () => {});
    await waitFor(() => sse.events.length >= 1 && grpcEvents.length >= 1);

    await t.gateway.stop({ graceMs: 50 });
    await sse.ended;
    expect(sse.events.at(-1)).toMatchObject({ name: 'error', data: { code: 'unavailable', retryable: true } });
    expect(sse.events.filter((event) => event.name === 'error' || event.name === 'done')).toHaveLength(1);
    expect((await grpcStatus).code).toBe(grpc.status.OK);
    expect(grpcEvents.at(-1)?.error).toMatchObject({ code: 'unavailable', retryable: true });
    client.close();

    for (const ask of t.reasoner.asks) {
      const cancel = await waitFor(() => t.reasoner.record(ask.ctx?.questionId ?? '')?.cancel);
      expect(cancel.reason).toBe('shutdown');
    }
  });

  it.each([
    ['an invalid question', JSON.stringify({ question: '' })],
    ['malformed JSON', '{"question": "Who'],
  ])('a draining gateway answers 503 before it reads the body over HTTP: %s, as a valid one', async (_what, body) => {
    await using t = await startTestGateway({ script: twoHopScript({ gated: true }) });
    const running = await askSse(t.baseUrl, t.keys.alice, { question: 'Which bridge did the ferry replace?' });
    await waitFor(() => running.events.length >= 1);
    // A request whose first line arrived before the drain: its connection is in use, so it is not
    // closed (a new connection would be refused by the closed listener).
    const socket = connect(Number(new URL(t.baseUrl).port), '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    const reply = new Promise<string>((resolve) => {
      let text = '';
      socket.on('data', (chunk: Buffer) => (text += chunk.toString()));
      socket.once('close', () => resolve(text));
    });
    socket.write('POST /v1/ask HTTP/1.1\r\n');

    const stopped = t.gateway.stop({ graceMs: 1_000 });
    socket.end(
      `Host: 127.0.0.1\r\nAuthorization: Bearer ${t.keys.bob.key}\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
    expect(await reply).toMatch(/^HTTP\/1\.1 503 [^]*urn:hopline:problem:shutting-down/);
    t.reasoner.releaseAll();
    await stopped;
  });
});
