import type { DurableStream } from '@hopline/bus';
import { retryingTransient } from './transient.js';
import { codecs, isConflict, subjects, type ErrorCode, type ErrorEvent__Output } from '@hopline/contracts';

/** Why a gateway asks for a question to end before its hop-reasoner finished it. */
export type EndReason = 'client_gone' | 'client_request' | 'deadline' | 'shutdown' | 'too_many_events' | 'not_taken';

const errorEvent = (code: ErrorCode, message: string): ErrorEvent__Output => ({
  code,
  message,
  retryable: code === 'unavailable' || code === 'deadline_exceeded',
});

const END_ERRORS: Record<EndReason, ErrorEvent__Output> = {
  client_gone: errorEvent('cancelled', 'no client was connected for longer than the resume grace window'),
  client_request: errorEvent('cancelled', 'the client cancelled the question'),
  deadline: errorEvent('deadline_exceeded', 'the question did not finish before its deadline'),
  shutdown: errorEvent('unavailable', 'the gateway shut down before the question finished; ask again'),
  too_many_events: errorEvent('resource_exhausted', 'the question produced more events than the gateway keeps'),
  not_taken: errorEvent('unavailable', 'no hop-reasoner took the question in time: all are busy or none is running'),
};

const isEndReason = (reason: string): reason is EndReason => Object.hasOwn(END_ERRORS, reason);

/**
 * The terminal error a question ended for `reason` carries. A reason this version does not know
 * (a newer gateway's) still ends the question, as a cancel.
 */
export function endError(reason: string): ErrorEvent__Output {
  return isEndReason(reason)
    ? END_ERRORS[reason]
    : errorEvent('cancelled', `the gateway ended the question (${reason})`);
}

/** Whether `error` is the end a request for `reason` brings, rather than one of the question's own. */
export function isEndFor(error: ErrorEvent__Output | null | undefined, reason: EndReason): boolean {
  const expected = END_ERRORS[reason];
  return error?.code === expected.code && error.message === expected.message;
}

/**
 * Requests to end questions, kept in a stream of their own so that they outlive the moment
 * they were sent: only a hop-reasoner writes a question's log, so a gateway that wants a
 * question to end asks here, and whichever hop-reasoner holds the question's job, or takes it
 * next, writes the end into the log. The first request of a question is the one that counts.
 */
export class QuestionEnds {
  constructor(private readonly requests: DurableStream) {}

  /**
   * Stores the request unless the question has one already, which stays the one that counts.
   * While NATS is unreachable it retries until `retryUntilUnixMs`, then rejects.
   */
  async request(questionId: string, reason: EndReason, retryUntilUnixMs: number): Promise<void> {
    const data = codecs.cancelCommand.encode({ questionId, reason });
    const options = { msgId: `${questionId}:end:${reason}`, expectedLastSubjectSeq: 0 };
    try {
      await retryingTransient(
        () => this.requests.publish(subjects.cancel(questionId), data, options),
        retryUntilUnixMs,
      );
    } catch (error) {
      if (!isConflict(error)) throw error;
    }
  }

  /** The reason of the first request to end the question, or undefined while there is none. */
  async requested(questionId: string): Promise<string | undefined> {
    const stored = await this.requests.last(subjects.cancel(questionId));
    return stored === undefined ? undefined : reasonOf(stored.data);
  }

  /**
   * The question's end requests, those stored first, then each as it comes, until the signal
   * aborts; `onCaughtUp` is called once those stored before it joined came. A question without
   * any costs no read of the stream: the process's one reading of it knows which have some.
   */
  async *follow(questionId: string, signal: AbortSignal, onCaughtUp?: () => void): AsyncGenerator<string> {
    for await (const stored of this.requests.follow(subjects.cancel(questionId), { signal, onCaughtUp })) {
      yield reasonOf(stored.data);
    }
  }
}

/** A request's reason; one that does not decode is still a request to end the question. */
function reasonOf(data: Uint8Array): string {
  try {
    return codecs.cancelCommand.decode(data).reason || 'unspecified';
  } catch {
    return 'malformed request';
  }
}
