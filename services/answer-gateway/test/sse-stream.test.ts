import { once } from 'node:events';
import { connect } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import { waitFor } from '@hopline/test-support';
import { describe, expect, it } from 'vitest';
import { createMemoryBroker, type DurableStream } from '@hopline/bus';
import { UnavailableError, type AskCommand } from '@hopline/contracts';
import { openQuestionStreams, questionJobsStream, QuestionQueue } from '@hopline/questions';
import { FakeReasoner, twoHopScript, type Script } from './support/fake-reasoner.js';
import { acceptsEventStream } from '../src/http/sse.js';
import { askJson, askSse, metricValue, startGatewayOn, startTestGateway, testKeys } from './support/harness.js';

const EXPECTED_SEQUENCE = [
  'accepted',
  'route',
  'hop_started',
  'retrieval',
  'hop_answer',
  'hop_started',
  'retrieval',
  'hop_answer',
];

describe('answer-gateway SSE stream', () => {
  it('streams route, hops, tokens, citations and one done, each with its seq as the event id', async () => {
    await using t = await startTestGateway();
    const stream = await askSse(t.baseUrl, t.keys.alice, {
      question: 'Which department does the owner of project Atlas belong to?',
      maxHops: 3,
    });
    expect(stream.response.status).toBe(200);
    expect(stream.response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(stream.response.headers.get('hopline-event-schema')).toBe('hopline.v1.QaEvent');
    await stream.ended;

    const names = stream.events.map((event) => event.name);
    expect(names.slice(0, EXPECTED_SEQUENCE.length)).toEqual(EXPECTED_SEQUENCE);
    expect(names.filter((name) => name === 'token').length).toBeGreaterThan(3);
    expect(names.slice(-2)).toEqual(['citations', 'done']);
    expect(names.filter((name) => name === 'done' || name === 'error')).toEqual(['done']);
    expect(stream.events.map((event) => event.id)).toEqual(stream.events.map((_, index) => index + 1));

    const questionId = stream.response.headers.get('hopline-question-id');
    expect(stream.events.every((event) => event.data.questionId === questionId)).toBe(true);
    const hopStarted = stream.events.find((event) => event.name === 'hop_started');
    expect(hopStarted?.data).toMatchObject({ hop: 1, maxHops: 3, subQuestion: 'Who owns project Atlas?' });
    const done = stream.events.at(-1)?.data;
    expect(done).toMatchObject({ stopReason: 'SUFFICIENT', hops: 2, cached: false });
    expect(done?.citations).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          index: 1,
          docId: `${t.keys.alice.tenantId}-atlas`,
          title: `Project Atlas (${t.keys.alice.tenantId})`,
        }),
      ]),
    );
    expect(done?.timings).toMatchObject({ totalMs: 25 });
  });

  it('sends the ask with the question, the hop budget, a deadline and the key scope', async () => {
    await using t = await startTestGateway({ config: { QUESTION_TIMEOUT_MS: 20_000 } });
    const before = Date.now();
    const stream = await askSse(t.baseUrl, t.keys.alice, { question: '  Who owns Atlas?  ', maxHops: 2 });
    await stream.ended;
    const [ask] = t.reasoner.asks;
    expect(ask?.question).toBe('Who owns Atlas?');
    expect(ask?.maxHops).toBe(2);
    expect(ask?.ctx?.scope).toEqual({
      tenantId: t.keys.alice.tenantId,
      userId: 'alice',
      kbIds: ['handbook', 'projects'],
      docIds: [],
    });
    expect(ask?.ctx?.deadlineUnixMs).toBeGreaterThanOrEqual(before + 20_000);
    expect(ask?.ctx?.deadlineUnixMs).toBeLessThanOrEqual(Date.now() + 20_000);
  });

  it('uses the configured default hop budget when the body names none', async () => {
    await using t = await startTestGateway({ config: { DEFAULT_MAX_HOPS: 4 } });
    await (
      await askSse(t.baseUrl, t.keys.alice, { question: 'Who owns Atlas?' })
    ).ended;
    expect(t.reasoner.asks[0]?.maxHops).toBe(4);
  });

  it('without Accept: text/event-stream returns the done payload as JSON', async () => {
    await using t = await startTestGateway();
    const response = await askJson(t.baseUrl, t.keys.alice, { question: 'Who owns Atlas?' });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    const body = (await response.json()) as Record<string, unknown>;
    expect(body).toMatchObject({
      answer: expect.stringContaining('[1]') as unknown,
      stopReason: 'SUFFICIENT',
      hops: 2,
      cached: false,
    });
    expect(body.questionId).toBe(response.headers.get('hopline-question-id'));
  });

  it('a question that ends in an error streams exactly one error event, and JSON clients get a problem', async () => {
    await using t = await startTestGateway({
      script: async (q) => {
        q.emit({ event: 'route', route: { route: 'SINGLE' } });
        q.emit({ event: 'error', error: { code: 'unavailable', message: 'retrieval is down', retryable: true } });
        // Anything after the terminal event must not reach clients.
        q.emit({ event: 'token', token: { text: 'late' } });
        q.emit({ event: 'done', done: { answer: 'late' } });
        return Promise.resolve();
      },
    });
    const stream = await askSse(t.baseUrl, t.keys.alice, { question: 'Who owns Atlas?' });
    await stream.ended;
    expect(stream.events.map((event) => event.name)).toEqual(['accepted', 'route', 'error']);
    expect(stream.events[2]?.data).toMatchObject({
      code: 'unavailable',
      message: 'retrieval is down',
      retryable: true,
    });

    const response = await askJson(t.baseUrl, t.keys.alice, { question: 'Who owns Atlas?' });
    expect(response.status).toBe(503);
    expect(response.headers.get('content-type')).toBe('application/problem+json');
    expect(await response.json()).toMatchObject({
      type: 'urn:hopline:problem:unavailable',
      detail: 'retrieval is down',
    });
  });

  it('drops redelivered events so that no client sees a seq twice', async () => {
    await using t = await startTestGateway({
      script: async (q) => {
        q.emit({ event: 'route', route: { route: 'SINGLE' } });
        q.emitRaw({ questionId: q.ask.ctx?.questionId ?? '', seq: 2, event: 'route', route: { route: 'SINGLE' } });
        q.emit({ event: 'token', token: { text: 'Dana' } });
        q.emitRaw({ questionId: q.ask.ctx?.questionId ?? '', seq: 3, event: 'token', token: { text: 'Dana' } });
        q.emit({ event: 'done', done: { answer: 'Dana', stopReason: 'SUFFICIENT' } });
        return Promise.resolve();
      },
    });
    const stream = await askSse(t.baseUrl, t.keys.alice, { question: 'Who owns Atlas?' });
    await stream.ended;
    expect(stream.events.map((event) => `${event.id}:${event.name}`)).toEqual([
      '1:accepted',
      '2:route',
      '3:token',
      '4:done',
    ]);
  });

  it('writes heartbeat comments while the stream is idle', async () => {
    await using t = await startTestGateway({ config: { SSE_HEARTBEAT_MS: 50 }, script: twoHopScript({ gated: true }) });
    const stream = await askSse(t.baseUrl, t.keys.alice, { question: 'Who owns Atlas?' });
    await waitFor(() => stream.events.length === 2 && stream.comments >= 2, {
      description: 'two heartbeats on the idle stream',
    });
    await waitFor(
      () => {
        t.reasoner.releaseAll();
        return stream.events.some((event) => event.name === 'done');
      },
      { description: 'the gated answer to finish' },
    );
    await stream.ended;
    expect(stream.events.at(-1)?.name).toBe('done');
  });

  it('closes the stream of a client that stopped reading once a write waited STREAM_STALL_MS, rather than holding it for good', async () => {
    const bigTokens: Script = async (q) => {
      q.emit({ event: 'route', route: { route: 'SINGLE' } });
      for (let i = 0; i < 200; i++) q.emit({ event: 'token', token: { text: 'x'.repeat(65_536) } });
      q.emit({ event: 'done', done: { answer: 'long', stopReason: 'SUFFICIENT' } });
    };
    await using t = await startTestGateway({ config: { STREAM_STALL_MS: 300 }, script: bigTokens });
    const { hostname, port } = new URL(t.baseUrl);
    const socket = connect(Number(port), hostname);
    await once(socket, 'connect');
    const body = JSON.stringify({ question: 'Who owns Atlas?' });
    socket.write(
      `POST /v1/ask HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${t.keys.alice.key}\r\n` +
        `Accept: text/event-stream\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
    socket.pause();
    // Long past the stall bound, the client starts reading again: it gets what was sent before
    // the gateway closed the stream, and no end.
    await delay(2_000);
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', () => {});
    socket.resume();
    await once(socket, 'close');
    const received = Buffer.concat(chunks).toString();
    expect(received).toContain('event: token');
    expect(received).not.toContain('event: done');
  });

  it('ends the stream with a deadline error when the reasoner never finishes, and cancels the question', async () => {
    await using t = await startTestGateway({
      config: { QUESTION_TIMEOUT_MS: 200 },
      script: twoHopScript({ gated: true }),
    });
    const stream = await askSse(t.baseUrl, t.keys.alice, { question: 'Who owns Atlas?' });
    await stream.ended;
    expect(stream.events.map((event) => event.name)).toEqual(['accepted', 'route', 'error']);
    expect(stream.events[2]?.data).toMatchObject({ code: 'deadline_exceeded', retryable: true });
    const questionId = String(stream.events[0]?.data.questionId);
    await waitFor(() => t.reasoner.record(questionId)?.cancel, { description: 'the cancel at the reasoner' });
    expect(t.reasoner.record(questionId)?.cancel?.reason).toBe('deadline');
  });

  it('ends a question that produces more events than the replay buffer keeps, and cancels it', async () => {
    await using t = await startTestGateway({
      config: { REPLAY_BUFFER_EVENTS: 10 },
      script: async (q) => {
        for (let i = 0; i < 10_000 && !q.cancelled.aborted; i++) {
          q.emit({ event: 'token', token: { text: `t${i}` } });
          await delay(2);
        }
        q.emit({ event: 'done', done: { answer: 'too late' } });
      },
    });
    const stream = await askSse(t.baseUrl, t.keys.alice, { question: 'Who owns Atlas?' });
    await stream.ended;
    // The end follows the tenth event as soon as the log takes it: a few more may come first.
    expect(stream.events.length).toBeGreaterThan(10);
    expect(stream.events.length).toBeLessThan(100);
    expect(stream.events.at(-1)).toMatchObject({ name: 'error', data: { code: 'resource_exhausted' } });
    expect(stream.events.map((event) => event.id)).toEqual(stream.events.map((_, index) => index + 1));
    const questionId = String(stream.events[0]?.data.questionId);
    expect((await waitFor(() => t.reasoner.record(questionId)?.cancel)).reason).toBe('too_many_events');
  });

  it('answers 503 with Retry-After when no hop-reasoner takes the question within the accept timeout', async () => {
    await using t = await startTestGateway({ config: { ACCEPT_TIMEOUT_MS: 300 } });
    await t.reasoner.stop();
    const response = await askJson(
      t.baseUrl,
      t.keys.alice,
      { question: 'Who owns Atlas?' },
      { Accept: 'text/event-stream' },
    );
    expect(response.status).toBe(503);
    expect(response.headers.get('content-type')).toBe('application/problem+json');
    expect(response.headers.get('retry-after')).toBe('1');
    expect(await response.json()).toMatchObject({
      type: 'urn:hopline:problem:unavailable',
      detail: 'no hop-reasoner took the question in time: all are busy or none is running',
    });
  });

  it('a question stored during a leader election (JetStream unavailable for longer than the accept timeout) is stored once the stream has a leader, and answered', async () => {
    const broker = createMemoryBroker();
    const bus = broker.connect();
    const jobs = await bus.durableStream(questionJobsStream);
    const electionEndsAt = Date.now() + 600;
    let publishes = 0;
    // A clustered stream answers no publish until its replicas elected a new leader.
    const electing = new Proxy(jobs, {
      get: (target, property) =>
        property === 'publish'
          ? (...args: Parameters<DurableStream['publish']>) => {
              publishes += 1;
              if (Date.now() < electionEndsAt) {
                return Promise.reject(new UnavailableError('stream publish: JetStream unavailable: no stream leader'));
              }
              return target.publish(...args);
            }
          : Reflect.get(target, property, target),
    });
    const { log, ends } = await openQuestionStreams(bus);
    const reasoner = await FakeReasoner.start(broker.connect(), twoHopScript());
    const keys = testKeys();
    const { gateway, baseUrl } = await startGatewayOn(bus, keys, {
      config: { ACCEPT_TIMEOUT_MS: 200 },
      questions: { queue: new QuestionQueue(electing), log, ends },
    });
    const answered = await askJson(baseUrl, keys.alice, { question: 'Who owns Atlas?' });
    expect(answered.status).toBe(200);
    expect(publishes).toBeGreaterThan(1);
    expect(reasoner.asks.map((ask) => ask.question)).toEqual(['Who owns Atlas?']);
    await gateway.stop({ graceMs: 0 });
    await reasoner.stop();
  });

  it('a question nobody takes after a slow enqueue is withdrawn all the same: no hop-reasoner runs it later', async () => {
    const broker = createMemoryBroker();
    const bus = broker.connect();
    const enqueueMs = 400;
    // NATS slow to store the first job, and no hop-reasoner: its client has a 503 once the accept timeout passed.
    let slow = true;
    let landed: () => void = () => {};
    const firstLanded = new Promise<void>((resolve) => (landed = resolve));
    class SlowQueue extends QuestionQueue {
      override async enqueue(ask: AskCommand): Promise<void> {
        if (!slow) return super.enqueue(ask);
        slow = false;
        await delay(enqueueMs);
        await super.enqueue(ask);
        landed();
      }
    }
    const { log, ends } = await openQuestionStreams(bus);
    const questions = { queue: new SlowQueue(await bus.durableStream(questionJobsStream)), log, ends };
    const keys = testKeys();
    const { gateway, baseUrl } = await startGatewayOn(bus, keys, { config: { ACCEPT_TIMEOUT_MS: 100 }, questions });
    const refused = await askJson(baseUrl, keys.alice, { question: 'Who owns Atlas?' });
    expect(refused.status).toBe(503);
    await firstLanded;

    const reasoner = await FakeReasoner.start(broker.connect(), twoHopScript());
    const answered = await askJson(baseUrl, keys.alice, { question: 'And now?' });
    expect(answered.status).toBe(200);
    expect(reasoner.asks.map((ask) => ask.question)).toEqual(['And now?']);
    await gateway.stop({ graceMs: 0 });
    await reasoner.stop();
  });

  it('opens the breaker in front of the hop-reasoners after repeated failures, and closes it once one answers again', async () => {
    await using t = await startTestGateway({ config: { ASK_BREAKER_RESET_MS: 300, ACCEPT_TIMEOUT_MS: 200 } });
    const script = t.reasoner.script;
    await t.reasoner.stop();
    const details: string[] = [];
    for (let i = 0; i < 6; i++) {
      const response = await askJson(t.baseUrl, t.keys.alice, { question: `Who owns Atlas ${i}?` });
      expect(response.status).toBe(503);
      details.push(((await response.json()) as { detail: string }).detail);
    }
    expect(details.at(-1)).toBe('no hop-reasoner took the recent questions in time; retry later');
    expect(await metricValue(t.metrics, 'hopline_breaker_state', { downstream: 'hop-reasoner' })).toBe(2);

    const revived = await FakeReasoner.start(t.peerBus, script);
    await waitFor(
      async () => (await askJson(t.baseUrl, t.keys.alice, { question: 'Who owns Atlas?' })).status === 200,
      { description: 'the breaker to close' },
    );
    expect(await metricValue(t.metrics, 'hopline_breaker_state', { downstream: 'hop-reasoner' })).toBe(0);
    await revived.stop();
  });

  it('Accept: text/event-stream ranked q=0 or below application/json is answered in JSON', async () => {
    expect(acceptsEventStream('text/event-stream')).toBe(true);
    expect(acceptsEventStream('application/json, text/event-stream')).toBe(true);
    expect(acceptsEventStream('text/event-stream;q=0.5, application/json;q=0.4')).toBe(true);
    expect(acceptsEventStream('application/json, text/event-stream;q=0.5')).toBe(false);
    expect(acceptsEventStream('*/*')).toBe(false);
    expect(acceptsEventStream(undefined)).toBe(false);
    await using t = await startTestGateway();
    const response = await askJson(
      t.baseUrl,
      t.keys.alice,
      { question: 'Who owns Atlas?' },
      { Accept: 'application/json, text/event-stream;q=0' },
    );
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    await response.text();
  });
});
