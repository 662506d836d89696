import * as grpc from '@grpc/grpc-js';
import { loadHoplineGrpc, type AnswerGatewayClient, type AskRequest, type QaEvent__Output } from '@hopline/contracts';
import { setTimeout as delay } from 'node:timers/promises';
import { startStallingProxy, waitFor } from '@hopline/test-support';
import { describe, expect, it } from 'vitest';
import { renderEvent } from '../src/event-json.js';
import { twoHopScript } from './support/fake-reasoner.js';
import { askSse, startTestGateway, type TestGateway, type TestKey } from './support/harness.js';

interface GrpcAsk {
  call: grpc.ClientReadableStream<QaEvent__Output>;
  events: QaEvent__Output[];
  /** Resolves with the final status (OK or the error's). */
  ended: Promise<grpc.StatusObject & { hoplineCode?: string }>;
}

function clientFor(t: TestGateway): AnswerGatewayClient {
  const { AnswerGateway } = loadHoplineGrpc().hopline.v1;
  return new AnswerGateway(t.grpcAddress, grpc.credentials.createInsecure());
}

function grpcAsk(client: AnswerGatewayClient, key: TestKey | undefined, request: AskRequest): GrpcAsk {
  const metadata = new grpc.Metadata();
  if (key) metadata.set('authorization', `Bearer ${key.key}`);
  const call = client.ask(request, metadata);
  const events: QaEvent__Output[] = [];
  call.on('data', (event: QaEvent__Output) => events.push(event));
  const ended = new Promise<grpc.StatusObject & { hoplineCode?: string }>((resolve) => {
    call.on('status', (status: grpc.StatusObject) => {
      const hoplineCode = status.metadata.get('hopline-error-code')[0];
      resolve({ ...status, ...(typeof hoplineCode === 'string' ? { hoplineCode } : {}) });
    });
    // An error event precedes the status; the status carries everything the tests need.
    call.on('error', () => {});
  });
  return { call, events, ended };
}

/** The event as both transports show it, without what differs between two questions. */
const comparable = (data: Record<string, unknown>) => {
  const { questionId: _questionId, atUnixMs: _atUnixMs, citations, ...rest } = data;
  return {
    ...rest,
    ...(Array.isArray(citations)
      ? { citations: (citations as Array<Record<string, unknown>>).map(({ snippet: _snippet, ...c }) => c) }
      : {}),
  };
};

describe('answer-gateway gRPC AnswerGateway.Ask', () => {
  it('streams the same versioned events as the SSE stream, ending with one done', async () => {
    await using t = await startTestGateway();
    const client = clientFor(t);
    const viaGrpc = grpcAsk(client, t.keys.alice, {
      question: 'Which department does the owner of project Atlas belong to?',
      maxHops: 3,
    });
    const status = await viaGrpc.ended;
    expect(status.code).toBe(grpc.status.OK);
    const viaSse = await askSse(t.baseUrl, t.keys.alice, {
      question: 'Which department does the owner of project Atlas belong to? (sse)',
      maxHops: 3,
    });
    await viaSse.ended;
    client.close();

    expect(viaGrpc.events.map((event) => event.seq)).toEqual(viaGrpc.events.map((_, index) => index + 1));
    expect(
      viaGrpc.events.filter((event) => event.event === 'done' || event.event === 'error').map((event) => event.event),
    ).toEqual(['done']);
    const grpcRendered = viaGrpc.events.map(renderEvent);
    expect(grpcRendered.map((event) => event.name)).toEqual(viaSse.events.map((event) => event.name));
    expect(grpcRendered.map((event) => comparable(event.data))).toEqual(
      viaSse.events.map((event) => comparable(event.data)),
    );
  });

  it('resumes a cancelled call with resume_question_id and last_event_id: complete, in order, nothing repeated', async () => {
    await using t = await startTestGateway({
      config: { RESUME_GRACE_MS: 5_000 },
      script: twoHopScript({ gated: true, tokens: 16 }),
    });
    const client = clientFor(t);
    const first = grpcAsk(client, t.keys.alice, { question: 'Who owns Atlas?' });
    await waitFor(() => first.events.length >= 1);
    const questionId = first.events[0]?.questionId ?? '';
    t.reasoner.release(questionId);
    await waitFor(() => first.events.length >= 4);
    first.call.cancel();
    expect((await first.ended).code).toBe(grpc.status.CANCELLED);

    const lastEventId = first.events.at(-1)?.seq ?? 0;
    const second = grpcAsk(client, t.keys.alice, { resumeQuestionId: questionId, lastEventId });
    await waitFor(() => {
      t.reasoner.release(questionId);
      return second.events.some((event) => event.event === 'done');
    });
    expect((await second.ended).code).toBe(grpc.status.OK);
    client.close();

    const all = [...first.events, ...second.events];
    expect(all.map((event) => event.seq)).toEqual(
      Array.from({ length: t.reasoner.record(questionId)?.emitted ?? 0 }, (_, i) => i + 1),
    );
    expect(t.reasoner.record(questionId)?.cancel).toBeUndefined();
  });

  it('a gRPC client that cancels and does not come back cancels the question after the grace window', async () => {
    await using t = await startTestGateway({ config: { RESUME_GRACE_MS: 100 }, script: twoHopScript({ gated: true }) });
    const client = clientFor(t);
    const call = grpcAsk(client, t.keys.alice, { question: 'Who owns Atlas?' });
    await waitFor(() => call.events.length >= 1);
    call.call.cancel();
    const cancel = await waitFor(() => t.reasoner.record(call.events[0]?.questionId ?? '')?.cancel);
    expect(cancel.reason).toBe('client_gone');
    client.close();
  });

  it('a slow reader still receives every event in order: writes wait for the transport to drain', async () => {
    const tokens = 3_000;
    const filler = 'x'.repeat(1_000);
    await using t = await startTestGateway({
      config: { REPLAY_BUFFER_EVENTS: 10_000 },
      script: async (q) => {
        q.emit({ event: 'route', route: { route: 'SINGLE' } });
        for (let i = 0; i < tokens; i++) q.emit({ event: 'token', token: { text: `${i}:${filler}` } });
        q.emit({ event: 'done', done: { answer: 'all tokens sent', stopReason: 'SUFFICIENT' } });
        return Promise.resolve();
      },
    });
    const client = clientFor(t);
    const slow = grpcAsk(client, t.keys.alice, { question: 'Stream a lot' });
    slow.call.pause();
    const ask = await waitFor(() => t.reasoner.asks[0]);
    // The reasoner has produced everything (accepted, route, tokens, done) while the client reads nothing.
    const total = tokens + 3;
    await waitFor(() => t.reasoner.record(ask.ctx?.questionId ?? '')?.emitted === total, { timeoutMs: 20_000 });
    expect(slow.events.length).toBeLessThan(total);
    slow.call.resume();
    expect((await slow.ended).code).toBe(grpc.status.OK);
    client.close();
    expect(slow.events).toHaveLength(total);
    expect(slow.events.map((event) => event.seq)).toEqual(Array.from({ length: total }, (_, i) => i + 1));
    expect(slow.events.slice(2, -1).every((event, i) => event.token?.text.startsWith(`${i}:`))).toBe(true);
  });

  it('ends the call UNAVAILABLE once a write waited STREAM_STALL_MS on a client that stopped reading; a resume gets the rest', async () => {
    const tokens = 200;
    await using t = await startTestGateway({
      config: { STREAM_STALL_MS: 300, REPLAY_BUFFER_EVENTS: 10_000 },
      script: async (q) => {
        q.emit({ event: 'route', route: { route: 'SINGLE' } });
        for (let i = 0; i < tokens; i++) q.emit({ event: 'token', token: { text: `${i}:${'x'.repeat(65_536)}` } });
        q.emit({ event: 'done', done: { answer: 'all tokens sent', stopReason: 'SUFFICIENT' } });
        return Promise.resolve();
      },
    });
    await using proxy = await startStallingProxy(Number(t.grpcAddress.split(':').at(-1)));
    const { AnswerGateway } = loadHoplineGrpc().hopline.v1;
    const stalled = new AnswerGateway(proxy.address, grpc.credentials.createInsecure());
    const first = grpcAsk(stalled, t.keys.alice, { question: 'Stream a lot' });
    await waitFor(() => first.events.length > 0);
    proxy.stall();
    // Long past the bound, the client reads again: what was sent before the call ended, then its status.
    await delay(2_000);
    proxy.resume();
    const status = await first.ended;
    stalled.close();
    expect(status.code).toBe(grpc.status.UNAVAILABLE);
    expect(status.details).toMatch(/took nothing of the stream/);
    const total = tokens + 3;
    expect(first.events.length).toBeGreaterThan(0);
    expect(first.events.length).toBeLessThan(total);
    const client = clientFor(t);
    const rest = grpcAsk(client, t.keys.alice, {
      resumeQuestionId: first.events[0]?.questionId ?? '',
      lastEventId: first.events.at(-1)?.seq ?? 0,
    });
    expect((await rest.ended).code).toBe(grpc.status.OK);
    client.close();
    const seqs = [...first.events, ...rest.events].map((event) => event.seq);
    expect(seqs).toEqual(Array.from({ length: total }, (_, i) => i + 1));
    expect(rest.events.at(-1)?.done?.answer).toBe('all tokens sent');
  });

  it('replays a cached answer as one done event with cached set', async () => {
    await using t = await startTestGateway();
    const client = clientFor(t);
    await grpcAsk(client, t.keys.alice, { question: 'Who owns Atlas?' }).ended;
    const second = grpcAsk(client, t.keys.alice, { question: 'who owns atlas' });
    expect((await second.ended).code).toBe(grpc.status.OK);
    client.close();
    expect(second.events).toHaveLength(1);
    expect(second.events[0]?.done?.cached).toBe(true);
    expect(t.reasoner.asks).toHaveLength(1);
  });

  it('maps refusals to gRPC statuses with the Hopline code in the trailers', async () => {
    await using t = await startTestGateway({ config: { RATE_BURST_PER_KEY: 1, RATE_PER_KEY_PER_SECOND: 0.001 } });
    const client = clientFor(t);
    const cases: Array<[TestKey | undefined, AskRequest, grpc.status, string]> = [
      [undefined, { question: 'Who owns Atlas?' }, grpc.status.UNAUTHENTICATED, 'unauthenticated'],
      [
        { ...t.keys.alice, key: 'hl_unknown' },
        { question: 'Who owns Atlas?' },
        grpc.status.UNAUTHENTICATED,
        'unauthenticated',
      ],
      [
        t.keys.bob,
        { question: 'Who owns Atlas?', kbIds: ['projects'] },
        grpc.status.PERMISSION_DENIED,
        'permission_denied',
      ],
      [t.keys.alice, { question: '   ' }, grpc.status.INVALID_ARGUMENT, 'invalid_argument'],
      [t.keys.alice, { question: 'Who owns Atlas?', maxHops: 9 }, grpc.status.INVALID_ARGUMENT, 'invalid_argument'],
      // Past the default MAX_QUESTION_CHARS (2,000): gRPC holds a question to HTTP's limit.
      [t.keys.alice, { question: 'Who owns Atlas? '.repeat(130) }, grpc.status.INVALID_ARGUMENT, 'invalid_argument'],
      [t.keys.alice, { resumeQuestionId: 'a0c1e2d3-0000-4000-8000-000000000000' }, grpc.status.NOT_FOUND, 'not_found'],
      [t.keys.carol, { question: 'first' }, grpc.status.OK, ''],
      [t.keys.carol, { question: 'second' }, grpc.status.RESOURCE_EXHAUSTED, 'resource_exhausted'],
    ];
    for (const [key, request, code, hoplineCode] of cases) {
      const status = await grpcAsk(client, key, request).ended;
      expect({ request, code: status.code, hoplineCode: status.hoplineCode ?? '' }).toEqual({
        request,
        code,
        hoplineCode,
      });
    }
    const limited = await grpcAsk(client, t.keys.carol, { question: 'third' }).ended;
    expect(limited.details).toMatch(/too-many-requests: .*retry after 1000 s/);
    // The same wait as HTTP's Retry-After, machine-readable in the trailers.
    expect(limited.metadata.get('retry-after')).toEqual(['1000']);
    const refused = await grpcAsk(client, t.keys.bob, { question: 'Who owns Atlas?', kbIds: ['projects'] }).ended;
    expect(refused.metadata.get('retry-after')).toEqual([]);
    client.close();
  });

  it('a refusal naming many kbs still ends the call with its status: kb ids are checked and counted, details shortened', async () => {
    await using t = await startTestGateway();
    const client = clientFor(t);
    // Ids no kb can have (too long), thousands of them: each is a validation issue.
    const invalid = Array.from({ length: 2_000 }, (_, i) => `kb-${i}-${'x'.repeat(200)}`);
    // The most an ask may name, each as long as an id may be, none the key's: the refusal names them all.
    const outside = Array.from({ length: 100 }, (_, i) => `kb-${i}-${'x'.repeat(120)}`);
    for (const [kbIds, code] of [
      [invalid, grpc.status.INVALID_ARGUMENT],
      [outside, grpc.status.PERMISSION_DENIED],
      [[...outside, 'one-more'], grpc.status.INVALID_ARGUMENT],
    ] as const) {
      // Without a status the call would run to this deadline instead.
      const metadata = new grpc.Metadata();
      metadata.set('authorization', `Bearer ${t.keys.alice.key}`);
      const call = client.ask({ question: 'Who owns Atlas?', kbIds: [...kbIds] }, metadata, {
        deadline: Date.now() + 10_000,
      });
      call.on('data', () => {});
      call.on('error', () => {});
      const status = await new Promise<grpc.StatusObject>((resolve) => call.on('status', resolve));
      expect({ count: kbIds.length, code: status.code }).toEqual({ count: kbIds.length, code });
      expect(status.details.length).toBeLessThan(1_200);
    }
    client.close();
  });

  it('narrows a question to the selected documents, validated as over HTTP', async () => {
    await using t = await startTestGateway();
    const client = clientFor(t);
    const asked = await grpcAsk(client, t.keys.alice, { question: 'Who owns Atlas?', docIds: ['atlas', 'atlas'] })
      .ended;
    expect(asked.code).toBe(grpc.status.OK);
    expect(t.reasoner.asks[0]?.ctx?.scope?.docIds).toEqual(['atlas']);
    const invalid = await grpcAsk(client, t.keys.alice, { question: 'Who owns Atlas?', docIds: ['..'] }).ended;
    expect(invalid.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(t.reasoner.asks).toHaveLength(1);
    client.close();
  });
});
