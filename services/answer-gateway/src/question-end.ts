import type { Bus } from '@hopline/bus';
import { codecs, subjects, type ErrorCode, type ErrorEvent__Output, type QaEvent__Output } from '@hopline/contracts';
import type { QuestionLog, QuestionMeta, QuestionQueue } from '@hopline/questions';

/** Why the gateway ended a question before the hop-reasoner did. */
export type CancelReason = 'client_gone' | 'client_request' | 'deadline' | 'shutdown' | 'too_many_events';

const errorEvent = (code: ErrorCode, message: string): ErrorEvent__Output => ({
  code,
  message,
  retryable: code === 'unavailable' || code === 'deadline_exceeded',
});

const TERMINAL_ERROR: Record<CancelReason, ErrorEvent__Output> = {
  client_gone: errorEvent('cancelled', 'no client was connected for longer than the resume grace window'),
  client_request: errorEvent('cancelled', 'the client cancelled the question'),
  deadline: errorEvent('deadline_exceeded', 'the question did not finish before its deadline'),
  shutdown: errorEvent('unavailable', 'the gateway shut down before the question finished; ask again'),
  too_many_events: errorEvent('resource_exhausted', 'the question produced more events than the gateway keeps'),
};

/** What a gateway reaches questions through: their jobs, their logs, and the hop-reasoners running them. */
export interface QuestionChannels {
  bus: Bus;
  queue: QuestionQueue;
  log: QuestionLog;
  /** Reports failures that have no caller, such as a cancel command that could not be sent. */
  onError: (message: string, error: unknown) => void;
}

// How long the gateway retries writing a question's end while NATS is unreachable.
const END_RETRY_MS = 5_000;

/**
 * Ends a question for `reason` unless it already ended: the error goes into its log, where
 * every reader on every gateway sees it and where a hop-reasoner finds it at its next write (or
 * when it takes the question), then the hop-reasoner running it is told to stop at once and
 * the job is withdrawn in case nobody took it yet. Resolves with the question's terminal event
 * and whether it is this one; rejects only when the end could not be written.
 */
export async function endQuestion(
  channels: QuestionChannels,
  questionId: string,
  meta: QuestionMeta,
  reason: CancelReason,
): Promise<{ terminal: QaEvent__Output; written: boolean }> {
  const ended = await channels.log.end(questionId, meta, TERMINAL_ERROR[reason], Date.now() + END_RETRY_MS);
  if (!ended.written) return ended;
  // Both only hasten what the log's end brings about anyway, so neither failing undoes the end.
  try {
    channels.bus.publish(subjects.cancel(questionId), codecs.cancelCommand.encode({ questionId, reason }));
  } catch (error) {
    channels.onError('could not send the cancel of a question', error);
  }
  await channels.queue
    .withdraw(questionId)
    .catch((error: unknown) => channels.onError('could not withdraw the job of an ended question', error));
  return ended;
}

/**
 * The end a reader gets when the question's end cannot be written (NATS unreachable): it is
 * this gateway's alone, after the last event it has.
 */
export function unrecordedEnd(questionId: string, after: QaEvent__Output | undefined): QaEvent__Output {
  return {
    questionId,
    seq: (after?.seq ?? 0) + 1,
    attempt: after?.attempt ?? 0,
    atUnixMs: Date.now(),
    event: 'error',
    error: errorEvent('unavailable', 'the message bus is unreachable, so the question could not go on; ask again'),
  };
}
