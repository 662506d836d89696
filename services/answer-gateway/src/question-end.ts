import type { Bus } from '@hopline/bus';
import { isTerminal, type ErrorEvent__Output, type QaEvent__Output } from '@hopline/contracts';
import type { EndReason, QuestionEnds, QuestionLog, QuestionQueue } from '@hopline/questions';

/** Why the gateway ends a question it accepted before the hop-reasoner did. */
export type CancelReason = Exclude<EndReason, 'not_taken'>;

/** What a gateway reaches questions through: their jobs, their logs, their end requests. */
export interface QuestionChannels {
  bus: Bus;
  queue: QuestionQueue;
  log: QuestionLog;
  ends: QuestionEnds;
  /** Reports failures that have no caller, such as an end request that could not be stored. */
  onError: (message: string, error: unknown) => void;
}

// How long the gateway retries storing an end request while NATS is unreachable.
const END_RETRY_MS = 5_000;

/**
 * How long the log is given to bring a question's end once it was requested (or once the
 * deadline passed) before the gateway hands its readers an end of its own: long enough for a
 * hop-reasoner to take the request and write the end, short enough that a question whose
 * fleet is gone, or whose log read stalled, does not leave a stream open.
 */
export const END_DELIVERY_MS = 3_000;

/** The end a reader gets when its question's events cannot be read or its end asked for. */
export const BUS_UNREACHABLE: ErrorEvent__Output = {
  code: 'unavailable',
  message: 'the message bus is unreachable, so the question could not go on; ask again',
  retryable: true,
};

/**
 * Asks the hop-reasoners to end the question: the one holding its job stops and writes the end
 * into the log, or the one taking the job next writes it instead of running the question.
 * Rejects only when the request could not be stored.
 */
export function requestEnd(channels: QuestionChannels, questionId: string, reason: EndReason): Promise<void> {
  return channels.ends.request(questionId, reason, Date.now() + END_RETRY_MS);
}

/** An end of this gateway's own, after the last event it has: it is in no log. */
export function unloggedEnd(
  questionId: string,
  after: QaEvent__Output | undefined,
  error: ErrorEvent__Output,
): QaEvent__Output {
  return {
    questionId,
    seq: (after?.seq ?? 0) + 1,
    attempt: after?.attempt ?? 0,
    atUnixMs: Date.now(),
    event: 'error',
    error,
  };
}

/**
 * The end for readers whose log did not bring one in time after `after`: the end the log holds
 * when it has one (its read stalled), else `error` as an end of this gateway's own (no
 * hop-reasoner is left to write one), numbered after the log's newest event, so that its id is
 * none the log holds; after `known` too (an event the caller knows the log held) when the log
 * cannot be read.
 */
export async function overdueEnd(
  channels: QuestionChannels,
  questionId: string,
  after: QaEvent__Output | undefined,
  error: ErrorEvent__Output,
  known?: QaEvent__Output,
): Promise<QaEvent__Output> {
  const head = await channels.log.head(questionId).catch((failure: unknown) => {
    channels.onError('could not read the end of a question', failure);
    return undefined;
  });
  if (head === undefined) {
    const last = known !== undefined && known.seq > (after?.seq ?? 0) ? known : after;
    return unloggedEnd(questionId, last, error);
  }
  if (head.event.seq <= (after?.seq ?? 0)) return unloggedEnd(questionId, after, error);
  return isTerminal(head.event) ? head.event : unloggedEnd(questionId, head.event, error);
}
