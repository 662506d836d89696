import type { AskCommand__Output, HopRecord, ReasoningTrace, ValidRequestContext } from '@hopline/contracts';
import type { QaEventDraft } from '@hopline/reasoning';

/**
 * A question's reasoning trace as far as it got, rebuilt from the events it sent: the route and,
 * per hop, its query, the chunks it retrieved and its answer. Stored after every hop's answer and
 * when the question fails or a gateway ends it, so that a question that failed, ran out of time or
 * whose hop-reasoner crashed can be replayed up to there. Its stop reason stays unspecified (the
 * question did not finish) unless a gateway ended it; its per-stage timings are not in the events.
 * The reasoner's own complete trace replaces it when the question ends with an answer.
 */
export class PartialTrace {
  private readonly trace: ReasoningTrace;
  private readonly hops = new Map<number, HopRecord>();

  constructor(ask: AskCommand__Output, request: ValidRequestContext, startedMs: number) {
    this.trace = {
      questionId: request.questionId,
      scope: request.scope,
      question: ask.question,
      hops: [],
      createdUnixMs: startedMs,
    };
  }

  /** Takes in one event; true when it ended a round (a hop's answer), the moment to store the trace. */
  note(event: QaEventDraft): boolean {
    switch (event.event) {
      case 'route':
        this.trace.analysis = event.route;
        return false;
      case 'hopStarted':
        this.hop(event.hopStarted.hop ?? 0).query = event.hopStarted.subQuestion;
        return false;
      case 'retrieval': {
        const hop = this.hop(event.retrieval.hop ?? 0);
        hop.evidenceChunkIds = event.retrieval.chunkIds;
        hop.degraded = event.retrieval.degraded;
        return false;
      }
      case 'hopAnswer': {
        const hop = this.hop(event.hopAnswer.hop ?? 0);
        hop.answer = event.hopAnswer;
        hop.query = event.hopAnswer.query;
        return true;
      }
      default:
        return false;
    }
  }

  /**
   * Marks the trace as ended by a gateway's request (see EndReason in @hopline/questions): a
   * deadline stops it `DEADLINE`, any other end (the client's cancel, a shutdown) `CANCELLED`.
   */
  endedBy(reason: string): void {
    this.trace.stopReason = reason === 'deadline' ? 'DEADLINE' : 'CANCELLED';
  }

  current(): ReasoningTrace {
    return { ...this.trace, hops: [...this.hops.values()] };
  }

  private hop(number: number): HopRecord {
    let record = this.hops.get(number);
    if (record === undefined) {
      record = { hop: number, evidenceChunkIds: [] };
      this.hops.set(number, record);
    }
    return record;
  }
}
