import { randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { codecs, subjects } from '@hopline/contracts';
import { openQuestionStreams } from '@hopline/questions';
import { waitFor } from '@hopline/test-support';
import { describe, expect, it, vi } from 'vitest';
import { generateApiKey } from '../src/api-keys.js';
import { twoHopScript, type Script } from './support/fake-reasoner.js';
import {
  askJson,
  askSse,
  bearer,
  metricValue,
  openSse,
  startTestGateway,
  testKeys,
  type SseEvent,
  type TestGateway,
  type TestKey,
} from './support/harness.js';

/** Streams tokens at its own pace until cancelled or `limit` is reached, then finishes. */
const freeRunningScript =
  (limit = 10_000): Script =>
  async (q) => {
    q.emit({ event: 'route', route: { route: 'SINGLE' } });
    for (let i = 0; i < limit && !q.cancelled.aborted; i++) {
      q.emit({ event: 'token', token: { text: `t${i} ` } });
      await delay(5);
    }
    q.emit({ event: 'done', done: { answer: 'finished', stopReason: 'SUFFICIENT' } });
  };

function resumeSse(t: TestGateway, key: TestKey, questionId: string, lastEventId: number): ReturnType<typeof openSse> {
  return openSse(`${t.baseUrl}/v1/questions/${questionId}/events`, {
    headers: { ...bearer(key), 'Last-Event-ID': String(lastEventId) },
  });
}

const ids = (events: SseEvent[]) => events.map((event) => event.id);

describe('answer-gateway resumption and cancellation', () => {
  it('the pings of readers on other replicas are heard through the subscription the gateway made as it started, not one per question', async () => {
    await using t = await startTestGateway({ script: twoHopScript() });
    const subscribe = vi.spyOn(t.bus, 'subscribe');
    for (const question of ['Who owns project Atlas?', 'Who leads project Borealis?']) {
      const response = await askJson(t.baseUrl, t.keys.alice, { question });
      expect(response.status).toBe(200);
    }
    expect(subscribe).not.toHaveBeenCalled();
  });

  it('a stream dropped mid-question and resumed with Last-Event-ID within the grace window is complete and in order, no event repeated', async () => {
    await using t = await startTestGateway({
      config: { RESUME_GRACE_MS: 5_000 },
      script: twoHopScript({ gated: true, tokens: 24 }),
    });
    const first = await askSse(t.baseUrl, t.keys.alice, {
      question: 'Which department does the owner of project Atlas belong to?',
    });
    const questionId = first.response.headers.get('hopline-question-id') ?? '';
    t.reasoner.release(questionId);
    await waitFor(() => first.events.length >= 4, { description: 'the first hop on the first connection' });
    first.abort();
    await first.ended;
    const seenBeforeDrop = first.events.length;

    // The question keeps running while nobody is connected; its events wait in the replay buffer.
    const emittedAtDrop = t.reasoner.record(questionId)?.emitted ?? 0;
    t.reasoner.release(questionId);
    await waitFor(() => (t.reasoner.record(questionId)?.emitted ?? 0) > emittedAtDrop, {
      description: 'events while disconnected',
    });

    const lastEventId = first.events.at(-1)?.id ?? 0;
    const second = await resumeSse(t, t.keys.alice, questionId, lastEventId);
    expect(second.response.status).toBe(200);
    await waitFor(
      () => {
        t.reasoner.release(questionId);
        return second.events.some((event) => event.name === 'done');
      },
      { description: 'the rest of the answer on the resumed connection' },
    );
    await second.ended;

    const all = [...first.events, ...second.events];
    const emitted = t.reasoner.record(questionId)?.emitted ?? 0;
    expect(ids(all)).toEqual(Array.from({ length: emitted }, (_, index) => index + 1));
    expect(second.events[0]?.id).toBe(lastEventId + 1);
    expect(seenBeforeDrop).toBeGreaterThanOrEqual(4);
    expect(all.filter((event) => event.name === 'done' || event.name === 'error').map((event) => event.name)).toEqual([
      'done',
    ]);
    expect(t.reasoner.record(questionId)?.cancel).toBeUndefined();
    expect(await metricValue(t.metrics, 'hopline_gateway_stream_resumes_total', { transport: 'sse' })).toBe(1);
  });

  it('resumes from a lastEventId query parameter as well as from the header', async () => {
    await using t = await startTestGateway({ script: twoHopScript({ gated: true }) });
    const first = await askSse(t.baseUrl, t.keys.alice, { question: 'Who owns Atlas?' });
    const questionId = first.response.headers.get('hopline-question-id') ?? '';
    await waitFor(() => first.events.length >= 1);
    first.abort();
    const second = await openSse(`${t.baseUrl}/v1/questions/${questionId}/events?lastEventId=1`, {
      headers: bearer(t.keys.alice),
    });
    await waitFor(() => {
      t.reasoner.release(questionId);
      return second.events.some((event) => event.name === 'done');
    });
    expect(second.events[0]?.id).toBe(2);
  });

  it('a client gone while its question was still being accepted cancels the question after the grace window', async () => {
    await using t = await startTestGateway({ config: { RESUME_GRACE_MS: 200 }, script: freeRunningScript() });
    t.reasoner.acceptDelayMs = 400;
    const client = new AbortController();
    const asked = fetch(`${t.baseUrl}/v1/ask`, {
      method: 'POST',
      headers: { ...bearer(t.keys.alice), 'Content-Type': 'application/json', Accept: 'text/event-stream' },
      body: JSON.stringify({ question: 'Who owns Atlas?' }),
      signal: client.signal,
    }).catch(() => undefined);
    const record = await waitFor(
      () => t.reasoner.asks.length === 1 && t.reasoner.record(t.reasoner.asks[0]?.ctx?.questionId ?? ''),
    );
    client.abort();
    await asked;
    const cancel = await waitFor(() => record.cancel, { timeoutMs: 5_000, description: 'the cancel at the reasoner' });
    expect(cancel.reason).toBe('client_gone');
  });

  it('a client gone longer than the grace window cancels the question: the reasoner sees the cancel and generates nothing more', async () => {
    const graceMs = 300;
    await using t = await startTestGateway({ config: { RESUME_GRACE_MS: graceMs }, script: freeRunningScript() });
    const stream = await askSse(t.baseUrl, t.keys.alice, { question: 'Who owns Atlas?' });
    const questionId = stream.response.headers.get('hopline-question-id') ?? '';
    await waitFor(() => stream.events.length >= 3);
    const droppedAt = Date.now();
    stream.abort();
    const emittedAtDrop = t.reasoner.record(questionId)?.emitted ?? 0;

    const cancel = await waitFor(() => t.reasoner.record(questionId)?.cancel, {
      timeoutMs: 10_000,
      description: 'the cancel at the reasoner',
    });
    expect(cancel.reason).toBe('client_gone');
    expect(cancel.atMs - droppedAt).toBeGreaterThanOrEqual(graceMs);
    const record = t.reasoner.record(questionId);
    // Within the window the question was still running...
    expect(record?.emitted ?? 0).toBeGreaterThan(emittedAtDrop);
    // ...and after the cancel the reasoner stopped: its script tried and was refused.
    await waitFor(() => (record?.suppressedAfterCancel ?? 0) > 0, { description: 'the script noticing the cancel' });
    const emittedAtCancel = record?.emitted ?? 0;
    await record?.done;
    expect(record?.emitted).toBe(emittedAtCancel);

    // A client coming back now reads the question's end: a cancelled error, nothing after.
    const late = await resumeSse(t, t.keys.alice, questionId, 0);
    await late.ended;
    const terminal = late.events.at(-1);
    expect(terminal?.name).toBe('error');
    expect(terminal?.data).toMatchObject({ code: 'cancelled' });
    expect(late.events.filter((event) => event.name === 'error' || event.name === 'done')).toHaveLength(1);
    expect(await metricValue(t.metrics, 'hopline_gateway_cancellations_total', { reason: 'client_gone' })).toBe(1);
  });

  it('a JSON client that disconnects is cancelled after the grace window too', async () => {
    await using t = await startTestGateway({ config: { RESUME_GRACE_MS: 100 }, script: twoHopScript({ gated: true }) });
    const controller = new AbortController();
    const pending = fetch(`${t.baseUrl}/v1/ask`, {
      method: 'POST',
      headers: { ...bearer(t.keys.alice), 'Content-Type': 'application/json' },
      body: JSON.stringify({ question: 'Who owns Atlas?' }),
      signal: controller.signal,
    }).catch(() => undefined);
    const ask = await waitFor(() => t.reasoner.asks[0]);
    controller.abort();
    await pending;
    const cancel = await waitFor(() => t.reasoner.record(ask.ctx?.questionId ?? '')?.cancel);
    expect(cancel.reason).toBe('client_gone');
  });

  it('DELETE /v1/questions/{id} cancels at once: the stream ends with a cancelled error and the reasoner sees the cancel', async () => {
    await using t = await startTestGateway({
      config: { RESUME_GRACE_MS: 60_000 },
      script: twoHopScript({ gated: true }),
    });
    const stream = await askSse(t.baseUrl, t.keys.alice, { question: 'Who owns Atlas?' });
    const questionId = stream.response.headers.get('hopline-question-id') ?? '';
    await waitFor(() => stream.events.length >= 1);

    const byOtherUser = await fetch(`${t.baseUrl}/v1/questions/${questionId}`, {
      method: 'DELETE',
      headers: bearer(t.keys.bob),
    });
    expect(byOtherUser.status).toBe(404);

    const response = await fetch(`${t.baseUrl}/v1/questions/${questionId}`, {
      method: 'DELETE',
      headers: bearer(t.keys.alice),
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ questionId, cancelled: true });
    await stream.ended;
    expect(stream.events.at(-1)).toMatchObject({ name: 'error', data: { code: 'cancelled' } });
    expect((await waitFor(() => t.reasoner.record(questionId)?.cancel)).reason).toBe('client_request');
  });

  it('only the asking user can resume a question: other users and tenants get 404, like an unknown id', async () => {
    await using t = await startTestGateway({ script: twoHopScript({ gated: true }) });
    const stream = await askSse(t.baseUrl, t.keys.alice, { question: 'Who owns Atlas?' });
    const questionId = stream.response.headers.get('hopline-question-id') ?? '';
    await waitFor(() => stream.events.length >= 1);
    for (const key of [t.keys.bob, t.keys.carol]) {
      const response = await fetch(`${t.baseUrl}/v1/questions/${questionId}/events`, {
        headers: { ...bearer(key), 'Last-Event-ID': '0' },
      });
      expect(response.status).toBe(404);
      expect(await response.json()).toMatchObject({ type: 'urn:hopline:problem:not-found' });
    }
    const unknown = await fetch(`${t.baseUrl}/v1/questions/6b1d0f4e-0000-4000-8000-000000000000/events`, {
      headers: bearer(t.keys.alice),
    });
    expect(unknown.status).toBe(404);
    const unauthenticated = await fetch(`${t.baseUrl}/v1/questions/${questionId}/events`);
    expect(unauthenticated.status).toBe(401);
  });

  it('a key of the same user that may not read every kb the question read gets 404 for its events, its cancel and its trace, on the replica that accepted it and on another', async () => {
    const keys = testKeys();
    // The same user's narrower key: one handed to an app, or the one that replaced a key whose kbs were cut.
    const narrow: TestKey = { ...keys.alice, key: generateApiKey(), kbIds: ['handbook'] };
    await using t = await startTestGateway({ keys: { ...keys, bob: narrow }, script: twoHopScript({ gated: true }) });
    const stream = await askSse(t.baseUrl, t.keys.alice, { question: 'Who owns Atlas?', kbIds: ['projects'] });
    const accepted = stream.response.headers.get('hopline-question-id') ?? '';
    await waitFor(() => stream.events.length >= 1);
    // A question another replica accepted, over the same kb: this gateway reads it from its log.
    const { log } = await openQuestionStreams(t.peerBus);
    const elsewhere = randomUUID();
    const scope = { tenantId: keys.alice.tenantId, userId: 'alice', kbIds: ['projects'] };
    await log
      .writer(elsewhere, { ...scope, deadlineUnixMs: Date.now() + 30_000 }, 1)
      .append({ event: 'accepted', accepted: {} }, 0);
    await t.traces.put(
      elsewhere,
      codecs.reasoningTrace.encode({
        questionId: elsewhere,
        scope,
        question: 'Who owns Atlas?',
        stopReason: 'SUFFICIENT',
      }),
    );

    for (const questionId of [accepted, elsewhere]) {
      const events = await fetch(`${t.baseUrl}/v1/questions/${questionId}/events`, {
        headers: { ...bearer(narrow), 'Last-Event-ID': '0' },
      });
      expect(events.status).toBe(404);
      await events.body?.cancel();
      const cancel = await fetch(`${t.baseUrl}/v1/questions/${questionId}`, {
        method: 'DELETE',
        headers: bearer(narrow),
      });
      expect(cancel.status).toBe(404);
    }
    const trace = await fetch(`${t.baseUrl}/v1/questions/${elsewhere}/trace`, { headers: bearer(narrow) });
    expect(trace.status).toBe(404);
    // The key that may read the kb reads both as before.
    const resumed = await resumeSse(t, t.keys.alice, elsewhere, 0);
    expect(resumed.response.status).toBe(200);
    resumed.abort();
    expect(
      (await fetch(`${t.baseUrl}/v1/questions/${elsewhere}/trace`, { headers: bearer(t.keys.alice) })).status,
    ).toBe(200);
    const cancelled = await fetch(`${t.baseUrl}/v1/questions/${accepted}`, {
      method: 'DELETE',
      headers: bearer(t.keys.alice),
    });
    expect(await cancelled.json()).toMatchObject({ cancelled: true });
  });

  it('refuses a Last-Event-ID that is malformed or ahead of the question, and one past its end', async () => {
    await using t = await startTestGateway();
    const stream = await askSse(t.baseUrl, t.keys.alice, { question: 'Who owns Atlas?' });
    await stream.ended;
    const questionId = stream.response.headers.get('hopline-question-id') ?? '';
    const lastId = stream.events.at(-1)?.id ?? 0;
    const resumeWith = (value: string) =>
      fetch(`${t.baseUrl}/v1/questions/${questionId}/events`, {
        headers: { ...bearer(t.keys.alice), 'Last-Event-ID': value },
      });

    const malformed = await resumeWith('abc');
    expect(malformed.status).toBe(400);
    const ahead = await resumeWith(String(lastId + 5));
    expect(ahead.status).toBe(400);
    const ended = await resumeWith(String(lastId));
    expect(ended.status).toBe(410);
    expect(await ended.json()).toMatchObject({ type: 'urn:hopline:problem:resume-unavailable' });

    // Within the window after the end, the tail can still be fetched once more.
    const tail = await resumeSse(t, t.keys.alice, questionId, lastId - 1);
    await tail.ended;
    expect(tail.events.map((event) => event.name)).toEqual(['done']);
  });

  it.each<[string, (lastEventId: string) => { query: string; headers: Record<string, string> }]>([
    ['the Last-Event-ID header', (lastEventId) => ({ query: '', headers: { 'Last-Event-ID': lastEventId } })],
    ['the lastEventId query parameter', (lastEventId) => ({ query: `?lastEventId=${lastEventId}`, headers: {} })],
  ])(
    "refuses an ask sent again with %s (an SSE client's retry of its POST) with 400 naming the resume route, and asks nothing",
    async (_form, resumeFrom) => {
      await using t = await startTestGateway({ script: twoHopScript({ gated: true }) });
      const body = { question: 'Which department does the owner of project Atlas belong to?' };
      const first = await askSse(t.baseUrl, t.keys.alice, body);
      const questionId = first.response.headers.get('hopline-question-id') ?? '';
      await waitFor(() => first.events.length >= 1);
      first.abort();

      const { query, headers } = resumeFrom(String(first.events.at(-1)?.id ?? 0));
      const retried = await fetch(`${t.baseUrl}/v1/ask${query}`, {
        method: 'POST',
        headers: {
          ...bearer(t.keys.alice),
          'Content-Type': 'application/json',
          Accept: 'text/event-stream',
          ...headers,
        },
        body: JSON.stringify(body),
      });
      expect(retried.status).toBe(400);
      expect(await retried.json()).toMatchObject({
        type: 'urn:hopline:problem:invalid-request',
        detail: expect.stringContaining('GET /v1/questions/{id}/events'),
      });
      expect(t.reasoner.asks.map((ask) => ask.ctx?.questionId)).toEqual([questionId]);
    },
  );

  it('takes an ask with an empty Last-Event-ID, which names no event seen, as an ordinary ask', async () => {
    await using t = await startTestGateway();
    const answered = await fetch(`${t.baseUrl}/v1/ask`, {
      method: 'POST',
      headers: { ...bearer(t.keys.alice), 'Content-Type': 'application/json', 'Last-Event-ID': '' },
      body: JSON.stringify({ question: 'Which department does the owner of project Atlas belong to?' }),
    });
    expect(answered.status).toBe(200);
    expect(await answered.json()).toMatchObject({ answer: expect.any(String) });
    expect(t.reasoner.asks).toHaveLength(1);
  });

  it('a question read through a replica that did not accept it gets an end there after its deadline when no hop-reasoner is left to write one: the log stays as it was', async () => {
    await using t = await startTestGateway();
    // A question accepted elsewhere, whose gateway and hop-reasoner are gone: only its log is left.
    const { log, ends } = await openQuestionStreams(t.peerBus);
    const questionId = randomUUID();
    const meta = {
      tenantId: t.keys.alice.tenantId,
      userId: 'alice',
      kbIds: ['handbook'],
      deadlineUnixMs: Date.now() + 300,
    };
    const writer = log.writer(questionId, meta, 1);
    await writer.append({ event: 'accepted', accepted: {} }, 0);
    await writer.append({ event: 'route', route: { route: 'SINGLE' } }, 0);

    const stream = await resumeSse(t, t.keys.alice, questionId, 0);
    expect(stream.response.status).toBe(200);
    await stream.ended;
    expect(stream.events.map((event) => event.name)).toEqual(['accepted', 'route', 'error']);
    expect(stream.events.at(-1)?.data).toMatchObject({ code: 'deadline_exceeded' });
    // The gateway asked for the end (a hop-reasoner taking the job would write it) and wrote nothing.
    expect(await ends.requested(questionId)).toBe('deadline');
    expect((await log.head(questionId))?.event.event).toBe('route');
  });

  it('a finished question is forgotten once the grace window after its end has passed', async () => {
    await using t = await startTestGateway({ config: { RESUME_GRACE_MS: 100 } });
    const stream = await askSse(t.baseUrl, t.keys.alice, { question: 'Who owns Atlas?' });
    await stream.ended;
    const questionId = stream.response.headers.get('hopline-question-id') ?? '';
    await waitFor(
      async () =>
        (await fetch(`${t.baseUrl}/v1/questions/${questionId}/events`, { headers: bearer(t.keys.alice) })).status ===
        404,
      {
        description: 'the question to be evicted',
      },
    );
  });

  it('HEAD on the events of a running question is 405 at once: it opens no reader, which would keep the question alive', async () => {
    await using t = await startTestGateway();
    // Running, accepted by another replica: this gateway would read it from its log.
    const { log } = await openQuestionStreams(t.peerBus);
    const questionId = randomUUID();
    const scope = { tenantId: t.keys.alice.tenantId, userId: 'alice', kbIds: ['handbook'] };
    await log
      .writer(questionId, { ...scope, deadlineUnixMs: Date.now() + 30_000 }, 1)
      .append({ event: 'accepted', accepted: {} }, 0);
    let pings = 0;
    const readers = t.peerBus.subscribe(subjects.readers(questionId), {}, () => {
      pings += 1;
    });
    const head = await fetch(`${t.baseUrl}/v1/questions/${questionId}/events`, {
      method: 'HEAD',
      headers: bearer(t.keys.alice),
      // Without the fix the HEAD hangs as a reader until the question ends.
      signal: AbortSignal.timeout(10_000),
    });
    readers.unsubscribe();
    expect(head.status).toBe(405);
    expect(head.headers.get('allow')).toBe('GET');
    expect(pings).toBe(0);
  });
});
