import { describe, expect, it } from 'vitest';
import type { Bus } from '@hopline/bus';
import type { QaEvent__Output } from '@hopline/contracts';
import type { LogEntry, QuestionEnds, QuestionLog, QuestionQueue } from '@hopline/questions';
import { RemoteQuestion } from '../src/remote-question.js';

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
});
