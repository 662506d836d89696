import { describe, expect, it } from 'vitest';
import { createMemoryBroker, type Bus } from '@hopline/bus';
import type { QaEvent__Output } from '@hopline/contracts';
import {
  openQuestionStreams,
  type LogEntry,
  type QuestionEnds,
  type QuestionLog,
  type QuestionQueue,
} from '@hopline/questions';
import { RemoteQuestion, type RemoteQuestionOptions } from '../src/remote-question.js';

describe('answer-gateway - a question read through a gateway that did not accept it', () => {
  it('resume - a client that left while the question was being opened gets nothing, and no reading or ping starts for it', async () => {
    const head: LogEntry = {
      event: { questionId: 'q1', seq: 1, attempt: 1, atUnixMs: Date.now(), accepted: {} } as unknown as QaEvent__Output,
      streamSeq: 1,
      meta: { tenantId: 'acme', userId: 'ada', kbIds: ['docs'], deadlineUnixMs: Date.now() + 30_000 },
    };
    const pings: string[] = [];
    let follows = 0;
    const log = {
      head: () => Promise.resolve(head),
      // eslint-disable-next-line require-yield -- a log with nothing new: a follow waits until its signal aborts
      follow: async function* (_questionId: string, _afterSeq: number, signal: AbortSignal) {
        follows += 1;
        await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
      },
    } as unknown as QuestionLog;
    const bus = { publish: (subject: string) => void pings.push(subject) } as unknown as Bus;
    const question = await RemoteQuestion.open(
      {
        bus,
        log,
        queue: {} as QuestionQueue,
        ends: {} as QuestionEnds,
        onError: () => undefined,
        graceMs: 30_000,
        deadlineSlackMs: 1_000,
      },
      'q1',
      { tenantId: 'acme', userId: 'ada', kbIds: ['docs'] },
    );
    const left = new AbortController();
    left.abort();

    const read: QaEvent__Output[] = [];
    for await (const event of question!.read(0, left.signal)) read.push(event);

    expect(read).toEqual([]);
    expect(follows).toBe(0);
    expect(pings).toEqual([]);
  });

  const meta = (deadlineUnixMs: number) => ({ tenantId: 't', userId: 'u', kbIds: ['kb'], deadlineUnixMs });
  const eventAt = (seq: number) =>
    ({ questionId: 'q', seq, attempt: 1, atUnixMs: Date.now(), hopStarted: {} }) as unknown as QaEvent__Output;
  // eslint-disable-next-line require-yield -- no end request ever comes: a follow waits until its signal aborts
  async function* noEndRequests(_questionId: string, signal: AbortSignal) {
    await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
  }
  const optionsWith = (log: unknown, deadlineSlackMs: number) =>
    ({
      bus: { publish: () => {} },
      queue: {},
      log,
      ends: { follow: noEndRequests, request: async () => {} },
      onError: () => {},
      graceMs: 30_000,
      deadlineSlackMs,
    }) as unknown as RemoteQuestionOptions;

  it('resume - a reader that stops early closes the log reading it opened, so no shared reading keeps feeding it', async () => {
    let followClosed = false;
    const log = {
      head: async () => ({ event: eventAt(1), streamSeq: 1, meta: meta(Date.now() + 60_000) }),
      async *follow() {
        try {
          yield eventAt(2);
          yield eventAt(3);
          await new Promise(() => {});
        } finally {
          followClosed = true;
        }
      },
    };
    const question = await RemoteQuestion.open(optionsWith(log, 1_000), 'q', {
      tenantId: 't',
      userId: 'u',
      kbIds: ['kb'],
    });
    for await (const read of question!.read(0, new AbortController().signal)) {
      expect(read.seq).toBe(2);
      break;
    }
    expect(followClosed).toBe(true);
  });

  it('resume - an end made here after a resume that read nothing comes after the event resumed from, though the log cannot be read again', async () => {
    let heads = 0;
    const log = {
      head: async () => {
        heads += 1;
        if (heads > 1) throw new Error('the bus failed');
        return { event: eventAt(5), streamSeq: 5, meta: meta(Date.now() - 1) };
      },
      // eslint-disable-next-line require-yield -- a stalled read
      async *follow(_questionId: string, _afterSeq: number, signal: AbortSignal) {
        await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
      },
    };
    const question = await RemoteQuestion.open(optionsWith(log, 0), 'q', { tenantId: 't', userId: 'u', kbIds: ['kb'] });
    const seqs: number[] = [];
    for await (const read of question!.read(5, new AbortController().signal)) seqs.push(read.seq);
    expect(seqs).toEqual([6]);
  }, 10_000);

  it('resume - reading back a question that had ended, past its deadline, asks for no end and pings no accepting gateway', async () => {
    const broker = createMemoryBroker();
    const bus = broker.connect();
    const streams = await openQuestionStreams(bus);
    const pings: string[] = [];
    const publish = bus.publish.bind(bus);
    bus.publish = (subject, ...rest) => {
      pings.push(subject);
      return publish(subject, ...rest);
    };
    // Answered in time; its deadline has passed since, and the client resumes late.
    const writer = streams.log.writer('q-late', meta(Date.now() - 1_000), 1);
    await writer.append({ event: 'accepted', accepted: {} }, 0);
    await writer.append({ event: 'done', done: { answer: 'A' } }, 0);
    const question = await RemoteQuestion.open(
      { bus, ...streams, onError: () => undefined, graceMs: 60_000, deadlineSlackMs: 1_000 },
      'q-late',
      { tenantId: 't', userId: 'u', kbIds: ['kb'] },
    );
    const read: string[] = [];
    // A client on a slow link: each event takes a while to be sent on, past the deadline's backstop.
    for await (const event of question!.read(0, new AbortController().signal)) {
      read.push(event.event ?? '');
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    expect(read).toEqual(['accepted', 'done']);
    expect(await streams.ends.requested('q-late')).toBeUndefined();
    expect(pings).toEqual([]);
    await bus.drain();
  });
});
