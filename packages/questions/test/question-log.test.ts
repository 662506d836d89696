import { randomUUID } from 'node:crypto';
import { createMemoryBroker, payloadBytes, type DurableStream } from '@hopline/bus';
import {
  codecs,
  ConflictError,
  headers,
  subjects,
  UnavailableError,
  ValidationError,
  type QaEvent__Output,
} from '@hopline/contracts';
import { describe, expect, it } from 'vitest';
import { QuestionLog, questionEventsStream } from '../src/index.js';

const meta = { tenantId: 'acme', userId: 'u', kbIds: ['kb'], deadlineUnixMs: Date.now() + 60_000 };
const token = (text: string) => ({ event: 'token' as const, token: { text } });
const inAMoment = () => Date.now() + 2_000;

async function all(log: QuestionLog, questionId: string, afterSeq = 0): Promise<QaEvent__Output[]> {
  const seen: QaEvent__Output[] = [];
  for await (const event of log.follow(questionId, afterSeq, AbortSignal.timeout(5_000))) seen.push(event);
  return seen;
}

/** A stream that stores what its writers give it as bytes, as NATS does. */
const asBytes = (stream: DurableStream): DurableStream => ({
  ...stream,
  publish: (subject, data, options) => stream.publish(subject, payloadBytes(data), options),
});

// Every test runs on the events as the memory adapter hands them over (values, in process) and
// as bytes (the distributed mode's wire format).
const carriers = [
  ['in process', (stream: DurableStream) => stream],
  ['as bytes', asBytes],
] as const;

describe.each(carriers)('question log, events %s', (_carrier, carry) => {
  async function openLog() {
    const bus = createMemoryBroker().connect();
    const events = carry(await bus.durableStream(questionEventsStream));
    return { events, log: new QuestionLog(events) };
  }

  it('question log - a writer numbers its events on from the head it started after, with its attempt and the asker', async () => {
    const { log } = await openLog();
    const questionId = randomUUID();
    const first = log.writer(questionId, meta, 1);
    await first.append({ event: 'accepted', accepted: {} }, inAMoment());
    await first.append(token('a'), inAMoment());
    const head = await log.head(questionId);
    expect(head).toMatchObject({ event: { seq: 2, attempt: 1, event: 'token' }, meta });

    const second = log.writer(questionId, meta, 2, head);
    await second.append({ event: 'restarted', restarted: { reason: 'the first stopped' } }, inAMoment());
    await second.append({ event: 'done', done: { answer: 'A' } }, inAMoment());
    expect((await all(log, questionId)).map((event) => `${event.seq}:${event.attempt}:${event.event}`)).toEqual([
      '1:1:accepted',
      '2:1:token',
      '3:2:restarted',
      '4:2:done',
    ]);
  });

  it('question log - of two writers after the same event, the second loses with ConflictError and writes nothing', async () => {
    const { log } = await openLog();
    const questionId = randomUUID();
    const [one, other] = [log.writer(questionId, meta, 1), log.writer(questionId, meta, 1)];
    await one.append({ event: 'accepted', accepted: {} }, inAMoment());
    await expect(other.append({ event: 'accepted', accepted: {} }, inAMoment())).rejects.toBeInstanceOf(ConflictError);
    expect((await log.head(questionId))?.event.seq).toBe(1);
  });

  it('question log - follow reads after the given seq and stops at the terminal event, whatever follows it', async () => {
    const { log } = await openLog();
    const questionId = randomUUID();
    const writer = log.writer(questionId, meta, 1);
    for (const text of ['a', 'b', 'c']) await writer.append(token(text), inAMoment());
    await writer.append({ event: 'done', done: { answer: 'abc' } }, inAMoment());
    await writer.append(token('after the end'), inAMoment());
    expect((await all(log, questionId, 2)).map((event) => event.seq)).toEqual([3, 4]);
  });

  it('question log - events appended together are one message of the log, read one by one: numbered on, resumable from inside, the last one its head', async () => {
    const { events, log } = await openLog();
    const questionId = randomUUID();
    const writer = log.writer(questionId, meta, 1);
    await writer.append({ event: 'accepted', accepted: {} }, inAMoment());
    await writer.appendAll(
      [token('a'), { event: 'hopAnswer', hopAnswer: { hop: 1, answer: 'x' } }, token('b')],
      inAMoment(),
    );
    await writer.appendAll([{ event: 'done', done: { answer: 'ab' } }], inAMoment());
    expect(await events.lastSequence()).toBe(3);
    expect(await log.head(questionId)).toMatchObject({ streamSeq: 3, event: { seq: 5, event: 'done' } });
    expect((await all(log, questionId)).map((event) => `${event.seq}:${event.event}`)).toEqual([
      '1:accepted',
      '2:token',
      '3:hopAnswer',
      '4:token',
      '5:done',
    ]);
    expect((await all(log, questionId, 3)).map((event) => event.seq)).toEqual([4, 5]);
    // A second writer after that head numbers on after the batch's last event.
    const next = log.writer(questionId, meta, 2, await log.head(questionId));
    await next.append(token('late'), inAMoment());
    expect((await log.head(questionId))?.event.seq).toBe(6);
  });

  it('question log - a stored batch of no events is refused as invalid, not read as a question without events', async () => {
    const { events, log } = await openLog();
    const questionId = randomUUID();
    const empty = { events: [] };
    await events.publish(
      subjects.events(questionId),
      { encode: () => codecs.qaEventBatch.encode(empty), decoded: () => codecs.qaEventBatch.asDecoded(empty) },
      { msgId: randomUUID(), headers: { [headers.eventCount]: '0' } },
    );
    await expect(log.head(questionId)).rejects.toThrow(ValidationError);
  });

  it('question log - a write whose acknowledgement was lost is retried and stored once', async () => {
    const { events } = await openLog();
    let lost = 0;
    // The first publish reaches the stream, but its answer does not come back (NATS went away).
    const flaky: DurableStream = {
      ...events,
      publish: async (...args) => {
        const stored = await events.publish(...args);
        if (lost++ === 0) throw new UnavailableError('stream publish: NATS connection unavailable');
        return stored;
      },
    };
    const log = new QuestionLog(flaky);
    const questionId = randomUUID();
    const writer = log.writer(questionId, meta, 1);
    await writer.append(token('once'), inAMoment());
    await writer.append(token('twice'), inAMoment());
    // Stored twice, the first event would have pushed the second to stream sequence 3.
    expect(await log.head(questionId)).toMatchObject({ streamSeq: 2, event: { seq: 2, token: { text: 'twice' } } });
    expect(lost).toBe(3);
  });

  it('question log - a write that cannot reach the stream by its deadline fails with the bus error', async () => {
    const { events } = await openLog();
    const down: DurableStream = {
      ...events,
      publish: async () => Promise.reject(new UnavailableError('stream publish: NATS connection unavailable')),
    };
    const writer = new QuestionLog(down).writer(randomUUID(), meta, 1);
    await expect(writer.append(token('lost'), Date.now() + 600)).rejects.toBeInstanceOf(UnavailableError);
  });
});

describe('question log in one process', () => {
  it('question log - over the memory adapter its messages are the events as decoding their bytes would give them', async () => {
    const events = await createMemoryBroker().connect().durableStream(questionEventsStream);
    const log = new QuestionLog(events);
    const questionId = randomUUID();
    const writer = log.writer(questionId, meta, 1);
    await writer.append({ event: 'accepted', accepted: {} }, inAMoment());
    await writer.appendAll(
      [token('a'), { event: 'done', done: { answer: 'a [1]', citations: [{ index: 1, chunkId: 'c1' }] } }],
      inAMoment(),
    );
    const stored = [];
    for await (const message of events.follow(subjects.events(questionId), { signal: AbortSignal.timeout(1_000) })) {
      stored.push(message);
      if (stored.length === 2) break;
    }
    const [single, batch] = stored;
    expect(single?.value).toEqual(codecs.qaEvent.decode(single?.data ?? new Uint8Array()));
    expect(batch?.value).toEqual(codecs.qaEventBatch.decode(batch?.data ?? new Uint8Array()));
    expect((await all(log, questionId)).at(-1)?.done?.citations[0]).toMatchObject({ chunkId: 'c1', docVersion: 0 });
  });
});
