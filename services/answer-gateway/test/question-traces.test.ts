import { randomUUID } from 'node:crypto';
import { createMemoryBroker, type KeyValueStore } from '@hopline/bus';
import { codecs, type ReasoningTrace } from '@hopline/contracts';
import { openQuestionStreams, type EventBody, type QuestionStreams } from '@hopline/questions';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { QuestionTraces } from '../src/question-traces.js';

const alice = { tenantId: 'acme', userId: 'alice', kbIds: ['docs'] };
const mallory = { tenantId: 'acme', userId: 'mallory', kbIds: ['docs'] };

const memoryTraces = (): KeyValueStore => {
  const store = new Map<string, Uint8Array>();
  return {
    put: async (key, value) => void store.set(key, value),
    get: async (key) => store.get(key),
    putUnless: async () => Promise.reject(new Error('the gateway only reads traces')),
  };
};

const traceOf = (questionId: string, stopReason: ReasoningTrace['stopReason']) =>
  codecs.reasoningTrace.encode({
    questionId,
    scope: alice,
    question: 'Who?',
    hops: [],
    stopReason,
  });

const done: EventBody = {
  event: 'done',
  done: { answer: 'A', citations: [], stopReason: 'SUFFICIENT', hops: 1, route: 'SINGLE' },
};

describe('answer-gateway: reading a question trace', () => {
  let streams: QuestionStreams;
  let traces: KeyValueStore;
  let drain: () => Promise<void>;

  beforeEach(async () => {
    const bus = createMemoryBroker().connect();
    streams = await openQuestionStreams(bus);
    traces = memoryTraces();
    drain = () => bus.drain();
  });
  afterEach(() => drain());

  /** A question of alice's whose log holds `events`, with a round-by-round trace stored. */
  async function question(events: EventBody[]): Promise<string> {
    const questionId = randomUUID();
    const writer = streams.log.writer(questionId, { ...alice, deadlineUnixMs: Date.now() + 30_000 }, 1);
    for (const body of [{ event: 'accepted', accepted: {} } as EventBody, ...events]) await writer.append(body, 0);
    await traces.put(questionId, traceOf(questionId, 'STOP_REASON_UNSPECIFIED'));
    return questionId;
  }

  it('question traces - once the log holds done, a read waits for the complete trace the hop-reasoner stores after it', async () => {
    const questionId = await question([done]);
    const reading = new QuestionTraces(traces, streams.log).read(alice, questionId);
    await new Promise((resolve) => setTimeout(resolve, 100));
    await traces.put(questionId, traceOf(questionId, 'SUFFICIENT'));
    expect((await reading)?.stopReason).toBe('SUFFICIENT');
  });

  it('question traces - a running question reads as far as it got, without waiting', async () => {
    const questionId = await question([]);
    const read = await new QuestionTraces(traces, streams.log, 60_000).read(alice, questionId);
    expect(read?.stopReason).toBe('STOP_REASON_UNSPECIFIED');
  });

  it('question traces - the wait is bounded: a complete trace that never comes leaves the one stored', async () => {
    const questionId = await question([done]);
    const read = await new QuestionTraces(traces, streams.log, 50).read(alice, questionId);
    expect(read?.stopReason).toBe('STOP_REASON_UNSPECIFIED');
  });

  it("question traces - another user's question is absent, and costs no wait", async () => {
    const questionId = await question([done]);
    expect(await new QuestionTraces(traces, streams.log, 60_000).read(mallory, questionId)).toBeUndefined();
    const unstored = randomUUID();
    expect(await new QuestionTraces(traces, streams.log, 60_000).read(alice, unstored)).toBeUndefined();
  });
});
