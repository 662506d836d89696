import { setTimeout as sleep } from 'node:timers/promises';
import { connectNatsBus, type Bus } from '@hopline/bus';
import { startNatsServer, waitFor } from '@hopline/test-support';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { GatewayConfig } from '../src/gateway.js';
import { FakeReasoner, twoHopScript, type Script } from './support/fake-reasoner.js';
import { askJson, askSse, bearer, openSse, startGatewayOn, testKeys, type SseEvent } from './support/harness.js';

// A server of this file's own: one test kills it and starts it again.
const nats = await startNatsServer();
afterAll(() => nats?.[Symbol.asyncDispose]());

const ids = (events: SseEvent[]) => events.map((event) => event.id);
const terminals = (events: SseEvent[]) => events.filter((event) => event.name === 'done' || event.name === 'error');

describe.skipIf(!nats)('answer-gateway over NATS: durable questions', () => {
  let cleanup: Array<() => Promise<unknown>> = [];
  afterEach(async () => {
    for (const step of cleanup.reverse()) await step();
    cleanup = [];
  });

  const connect = async (name: string): Promise<Bus> => {
    const bus = await connectNatsBus({ url: nats?.url ?? '', name, onError: () => {} });
    cleanup.push(() => bus.drain());
    return bus;
  };
  const gatewayOn = async (keys: ReturnType<typeof testKeys>, config: Partial<GatewayConfig> = {}) => {
    const started = await startGatewayOn(await connect('answer-gateway'), keys, { config });
    cleanup.push(() => started.gateway.stop({ graceMs: 0 }));
    return started;
  };
  const reasonerWith = async (script: Script, options: { capacity?: number } = {}) => {
    const reasoner = await FakeReasoner.start(await connect('hop-reasoner'), script, options);
    cleanup.push(() => reasoner.stop());
    return reasoner;
  };

  it('full fleet - asks nobody can take wait for the accept timeout and get 503 with Retry-After, never 500; none runs once a hop-reasoner frees up', async () => {
    const keys = testKeys();
    const { baseUrl } = await gatewayOn(keys, { ACCEPT_TIMEOUT_MS: 500, RATE_BURST_PER_KEY: 100 });
    // Two hop-reasoners with room for two questions each, all four held open.
    const reasoners = [
      await reasonerWith(twoHopScript({ gated: true }), { capacity: 2 }),
      await reasonerWith(twoHopScript({ gated: true }), { capacity: 2 }),
    ];
    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        askJson(baseUrl, keys.alice, { question: `Who owns Atlas ${i}?` }, { Accept: 'text/event-stream' }),
      ),
    );
    const statuses = responses.map((response) => response.status);
    expect(statuses.filter((status) => status === 200)).toHaveLength(4);
    const refused = responses.filter((response) => response.status !== 200);
    expect(refused.map((response) => response.status).every((status) => status === 503 || status === 429)).toBe(true);
    expect(refused.every((response) => Number(response.headers.get('retry-after')) >= 1)).toBe(true);
    expect(reasoners.flatMap((reasoner) => reasoner.asks)).toHaveLength(4);

    // Free the fleet: the four answer, and not one of the refused questions is run afterwards.
    const answers = Promise.all(
      responses.filter((response) => response.status === 200).map((response) => response.text()),
    );
    let freed = false;
    void answers.then(() => (freed = true));
    await waitFor(
      () => {
        for (const reasoner of reasoners) reasoner.releaseAll();
        return freed;
      },
      { timeoutMs: 10_000, description: 'the four questions answered' },
    );

    // The breaker in front of the fleet opened on all those refusals; its trial ask goes through.
    const next = await waitFor(
      async () => {
        const response = await askSse(baseUrl, keys.bob, { question: 'And now?' });
        return response.response.status === 200 && response;
      },
      { timeoutMs: 20_000, intervalMs: 250, description: 'a question taken once the fleet is free' },
    );
    const questionId = next.response.headers.get('hopline-question-id') ?? '';
    expect(reasoners.flatMap((reasoner) => reasoner.asks.map((ask) => ask.ctx?.questionId))).toEqual(
      expect.arrayContaining([questionId]),
    );
    expect(reasoners.flatMap((reasoner) => reasoner.asks)).toHaveLength(5);
    next.abort();
  });

  it('resume through another gateway replica - the same events, none lost or repeated, and the accepting replica does not cancel a question read elsewhere', async () => {
    const keys = testKeys();
    const graceMs = 600;
    const first = await gatewayOn(keys, { RESUME_GRACE_MS: graceMs });
    const second = await gatewayOn(keys, { RESUME_GRACE_MS: graceMs });
    const reasoner = await reasonerWith(twoHopScript({ gated: true, tokens: 12 }));

    const asked = await askSse(first.baseUrl, keys.alice, {
      question: 'Which department does the owner of Atlas belong to?',
    });
    const questionId = asked.response.headers.get('hopline-question-id') ?? '';
    await waitFor(() => asked.events.length >= 2);
    asked.abort();
    await asked.ended;
    const lastEventId = asked.events.at(-1)?.id ?? 0;

    // Another tenant, or another user of the same tenant, cannot read or cancel it there either.
    for (const key of [keys.carol, keys.bob]) {
      const read = await fetch(`${second.baseUrl}/v1/questions/${questionId}/events`, {
        headers: { ...bearer(key), 'Last-Event-ID': '0' },
      });
      expect(read.status).toBe(404);
      const cancel = await fetch(`${second.baseUrl}/v1/questions/${questionId}`, {
        method: 'DELETE',
        headers: bearer(key),
      });
      expect(cancel.status).toBe(404);
    }

    const resumed = await openSse(`${second.baseUrl}/v1/questions/${questionId}/events`, {
      headers: { ...bearer(keys.alice), 'Last-Event-ID': String(lastEventId) },
    });
    expect(resumed.response.status).toBe(200);
    // Longer than the grace window with nobody reading at the accepting replica: the reader on
    // the other one keeps the question alive.
    await sleep(3 * graceMs);
    expect(reasoner.record(questionId)?.cancel).toBeUndefined();
    await waitFor(
      () => {
        reasoner.release(questionId);
        return resumed.events.some((event) => event.name === 'done');
      },
      { timeoutMs: 10_000, description: 'the answer through the second replica' },
    );
    await resumed.ended;
    const all = [...asked.events, ...resumed.events];
    expect(ids(all)).toEqual(all.map((_, index) => index + 1));
    expect(resumed.events[0]?.id).toBe(lastEventId + 1);
    expect(terminals(all).map((event) => event.name)).toEqual(['done']);
  });

  it('cancel through another gateway replica - its owner ends the question there, and the stream on the accepting replica ends with it', async () => {
    const keys = testKeys();
    const first = await gatewayOn(keys);
    const second = await gatewayOn(keys);
    const reasoner = await reasonerWith(twoHopScript({ gated: true }));
    const stream = await askSse(first.baseUrl, keys.alice, { question: 'Who owns Atlas?' });
    const questionId = stream.response.headers.get('hopline-question-id') ?? '';
    await waitFor(() => stream.events.length >= 2);
    const response = await fetch(`${second.baseUrl}/v1/questions/${questionId}`, {
      method: 'DELETE',
      headers: bearer(keys.alice),
    });
    expect(await response.json()).toEqual({ questionId, cancelled: true });
    await stream.ended;
    expect(stream.events.at(-1)).toMatchObject({ name: 'error', data: { code: 'cancelled' } });
    expect((await waitFor(() => reasoner.record(questionId)?.cancel)).reason).toBe('client_request');
  });

  it('NATS killed and restarted after 3 s with 20 questions streaming: every stream ends, none with a gap, and they are answered', async () => {
    const keys = testKeys();
    const { baseUrl } = await gatewayOn(keys, { RATE_BURST_PER_KEY: 100 });
    // Each question streams a token every 100 ms for about four seconds, across the outage.
    await reasonerWith(async (q) => {
      q.emit({ event: 'route', route: { route: 'SINGLE' } });
      for (let i = 0; i < 40; i++) {
        q.emit({ event: 'token', token: { text: `t${i} ` } });
        await sleep(100);
      }
      q.emit({ event: 'done', done: { answer: 'done', stopReason: 'SUFFICIENT' } });
    });
    const streams = await Promise.all(
      Array.from({ length: 20 }, (_, i) => askSse(baseUrl, keys.alice, { question: `Question ${i}?` })),
    );
    expect(streams.map((stream) => stream.response.status).every((status) => status === 200)).toBe(true);
    await waitFor(() => streams.every((stream) => stream.events.length >= 3), { timeoutMs: 10_000 });

    await nats?.stop('SIGKILL');
    await sleep(3_000);
    await nats?.start();

    await Promise.all(streams.map((stream) => stream.ended));
    for (const stream of streams) {
      expect(ids(stream.events)).toEqual(stream.events.map((_, index) => index + 1));
      expect(terminals(stream.events)).toHaveLength(1);
    }
    const answered = streams.filter((stream) => stream.events.at(-1)?.name === 'done');
    expect(answered.length).toBeGreaterThanOrEqual(18);
  }, 60_000);
});
