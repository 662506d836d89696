import { setTimeout as sleep } from 'node:timers/promises';
import type { KeyValueStore } from '@hopline/bus';
import { codecs, type ReasoningTrace__Output } from '@hopline/contracts';
import type { QuestionLog } from '@hopline/questions';
import { mayRead, type QuestionReader } from './question-access.js';

/**
 * How long a trace read waits for the complete trace of a question whose log ends with `done`:
 * the hop-reasoner stores it while `done` goes out, which takes one write to NATS (a few ms).
 */
export const COMPLETE_TRACE_WAIT_MS = 2_000;
const COMPLETE_TRACE_POLL_MS = 20;

/**
 * The questions' reasoning traces as their askers read them. The hop-reasoner stores a trace
 * round by round (no stop reason: the question has not finished), and its complete one while
 * the question's `done` is written, so a client that has the answer may ask before the complete
 * trace is stored: for a question whose log ends with `done` the read waits for it (up to
 * COMPLETE_TRACE_WAIT_MS, then what is stored), so the answer's trace is never a partial one
 * while the hop-reasoner lives to store it.
 */
export class QuestionTraces {
  constructor(
    private readonly traces: KeyValueStore,
    private readonly log: Pick<QuestionLog, 'head'>,
    private readonly waitMs = COMPLETE_TRACE_WAIT_MS,
  ) {}

  /** The trace of a question the reader may read (`mayRead`); undefined for an unknown question or another's. */
  async read(reader: QuestionReader, questionId: string): Promise<ReasoningTrace__Output | undefined> {
    let trace = await this.stored(questionId);
    if (trace && !isOwn(trace, reader)) return undefined;
    if (trace && finished(trace)) return trace;
    const head = await this.log.head(questionId);
    // The log's headers name the asker: another's question costs no wait.
    if (head?.event.event !== 'done' || !mayRead(reader, head.meta)) {
      return trace;
    }
    for (const until = Date.now() + this.waitMs; Date.now() < until;) {
      await sleep(COMPLETE_TRACE_POLL_MS);
      trace = await this.stored(questionId);
      if (trace && finished(trace)) break;
    }
    return trace && isOwn(trace, reader) ? trace : undefined;
  }

  private async stored(questionId: string): Promise<ReasoningTrace__Output | undefined> {
    const stored = await this.traces.get(questionId);
    return stored ? codecs.reasoningTrace.decode(stored) : undefined;
  }
}

const isOwn = (trace: ReasoningTrace__Output, reader: QuestionReader) =>
  trace.scope !== null && trace.scope !== undefined && mayRead(reader, trace.scope);

/** A trace stored round by round has no stop reason yet; the complete one (or an ended one) has. */
const finished = (trace: ReasoningTrace__Output) => trace.stopReason !== 'STOP_REASON_UNSPECIFIED';
