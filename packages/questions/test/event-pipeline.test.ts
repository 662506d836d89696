import { randomUUID } from 'node:crypto';
import { createMemoryBroker } from '@hopline/bus';
import { ConflictError, type QaEvent__Output } from '@hopline/contracts';
import { describe, expect, it } from 'vitest';
import { EventPipeline, QuestionLog, questionEventsStream } from '../src/index.js';

const meta = { tenantId: 'acme', userId: 'u', kbIds: ['kb'], deadlineUnixMs: Date.now() + 60_000 };
const token = (text: string) => ({ event: 'token' as const, token: { text } });
const inAMoment = () => Date.now() + 2_000;

async function openLog() {
  const bus = createMemoryBroker().connect();
  const events = await bus.durableStream(questionEventsStream);
  return { events, log: new QuestionLog(events) };
}

async function all(log: QuestionLog, questionId: string): Promise<QaEvent__Output[]> {
  const seen: QaEvent__Output[] = [];
  for await (const event of log.follow(questionId, 0, AbortSignal.timeout(5_000))) seen.push(event);
  return seen;
}

const described = (event: QaEvent__Output) =>
  `${event.seq}:${event.event}${event.event === 'token' ? `:${event.token?.text ?? ''}` : ''}`;

describe('event pipeline', () => {
  it('event pipeline - events pushed without waiting are stored in order and gap-free, tokens queued behind one write joined', async () => {
    const { log } = await openLog();
    const questionId = randomUUID();
    const pipeline = new EventPipeline(log.writer(questionId, meta, 1), inAMoment());
    pipeline.push({ event: 'accepted', accepted: {} });
    // Pushed in the same turn: one write, in which the tokens before and after the hop answer
    // are each joined, and never cross it.
    for (const text of ['a', 'b', 'c']) pipeline.push(token(text));
    pipeline.push({ event: 'hopAnswer', hopAnswer: { hop: 1, answer: 'x' } });
    for (const text of ['d', 'e']) pipeline.push(token(text));
    pipeline.push({ event: 'done', done: { answer: 'abcde' } });
    await pipeline.flush();

    expect((await all(log, questionId)).map(described)).toEqual([
      '1:accepted',
      '2:token:abc',
      '3:hopAnswer',
      '4:token:de',
      '5:done',
    ]);
  });

  it('event pipeline - the events queued behind a write go out as one message; a write pushed after a flush is a message of its own', async () => {
    const { events, log } = await openLog();
    const questionId = randomUUID();
    const pipeline = new EventPipeline(log.writer(questionId, meta, 1), inAMoment());
    pipeline.push({ event: 'accepted', accepted: {} });
    pipeline.push({ event: 'hopStarted', hopStarted: { hop: 1 } });
    pipeline.push({ event: 'retrieval', retrieval: { hop: 1 } });
    await pipeline.flush();
    expect(await events.lastSequence()).toBe(1);
    pipeline.push({ event: 'done', done: { answer: 'x' } });
    await pipeline.flush();
    expect(await events.lastSequence()).toBe(2);
    expect((await all(log, questionId)).map(described)).toEqual([
      '1:accepted',
      '2:hopStarted',
      '3:retrieval',
      '4:done',
    ]);
  });

  it('event pipeline - events pushed across awaits of work already done go out as one message', async () => {
    const { events, log } = await openLog();
    const questionId = randomUUID();
    const pipeline = new EventPipeline(log.writer(questionId, meta, 1), inAMoment());
    // As a reasoning whose calls stay in the process: it waits between its events, but only on
    // promises that settle before the event loop's next turn.
    pipeline.push({ event: 'hopStarted', hopStarted: { hop: 1 } });
    await Promise.resolve();
    pipeline.push({ event: 'retrieval', retrieval: { hop: 1 } });
    await new Promise<void>((resolve) => queueMicrotask(resolve));
    pipeline.push({ event: 'done', done: { answer: 'x' } });
    await pipeline.flush();
    expect(await events.lastSequence()).toBe(1);
    expect((await all(log, questionId)).map(described)).toEqual(['1:hopStarted', '2:retrieval', '3:done']);
  });

  it('event pipeline - a pipeline whose writer lost the question stops: flush and push report the conflict, nothing more is written', async () => {
    const { log } = await openLog();
    const questionId = randomUUID();
    await log.writer(questionId, meta, 1).append({ event: 'accepted', accepted: {} }, inAMoment());
    // A second writer that starts after the same head: the first write of one of them must lose.
    const head = await log.head(questionId);
    await log.writer(questionId, meta, 2, head).append({ event: 'restarted', restarted: { reason: 'r' } }, inAMoment());
    const failures: unknown[] = [];
    const pipeline = new EventPipeline(log.writer(questionId, meta, 1, head), inAMoment(), (error) =>
      failures.push(error),
    );
    pipeline.push(token('late'));
    pipeline.push({ event: 'done', done: { answer: 'late' } });
    await expect(pipeline.flush()).rejects.toBeInstanceOf(ConflictError);
    expect(failures).toHaveLength(1);
    expect(failures[0]).toBeInstanceOf(ConflictError);
    expect(() => pipeline.push(token('again'))).toThrow(ConflictError);
    expect((await log.head(questionId))?.event).toMatchObject({ seq: 2, event: 'restarted' });
  });
});
