import type { Bus } from '@hopline/bus';
import {
  codecs,
  DeadlineExceededError,
  HoplineError,
  isBusUnavailable,
  isInfrastructureError,
  subjects,
  toHoplineError,
} from '@hopline/contracts';
import type { CallContext, RetrieveInput, RetrieveOutput, RetrieverPort } from '@hopline/reasoning';
import { hedged, LatencyWindow, remainingMs, type Guard } from '@hopline/resilience';
import { retrieveOutputOf, retrieveRequestFor } from './retrieve-messages.js';
import type { WorkerDirectory } from './worker-directory.js';

export interface RetrieverClientDeps {
  bus: Bus;
  guard: Guard;
  workers: WorkerDirectory;
  /** The longest one hop's retrieval may take, its hedge included. */
  budgetMs: number;
  /** The hedge never starts sooner than this, however fast retrievals have been. Default 50 ms. */
  minHedgeDelayMs?: number;
}

/** How long a worker that failed an attempt, or left a hedged one unanswered, is passed over. */
const AVOID_AFTER_LOST_HEDGE_MS = 5_000;

/** A failure of the whole retrieval in the words an answer's reader understands; the code is kept. */
function explain(error: HoplineError, limitMs: number): HoplineError {
  switch (error.code) {
    case 'deadline_exceeded':
      return new DeadlineExceededError(`no retrieval worker answered within ${Math.round(limitMs)} ms`, {
        cause: error,
      });
    case 'no_responders':
      return new HoplineError('no_responders', 'no retrieval worker is running', { cause: error });
    case 'unavailable':
      return new HoplineError(
        'unavailable',
        isBusUnavailable(error) ? 'the message bus is unavailable' : 'no retrieval worker could be reached',
        { cause: error },
      );
    case 'breaker_open':
      return new HoplineError('breaker_open', 'retrieval failed repeatedly and is skipped until it recovers', {
        cause: error,
      });
    default:
      return error;
  }
}

/**
 * Retrieval over NATS under its breaker and its stage budget, hedged across workers. The first
 * attempt goes to the live worker with the fewest of this reasoner's retrievals in flight, on
 * its own subject; when it has not answered after the recent p95 of retrievals (or failed), a
 * second goes to another worker, and the first answer wins. One frozen worker thus costs a
 * hedge delay, not the question's deadline. Without announced workers it falls back to the
 * queue group.
 */
export function createRetrieverClient(deps: RetrieverClientDeps): RetrieverPort {
  const { bus, guard, workers, budgetMs } = deps;
  const latency = new LatencyWindow({ floorMs: deps.minHedgeDelayMs ?? 50, ceilingMs: budgetMs / 2 });

  return {
    async retrieve(input: RetrieveInput, ctx: CallContext): Promise<RetrieveOutput> {
      const request = codecs.retrieveRequest.encode(retrieveRequestFor(input, ctx));
      const limitMs = Math.min(budgetMs, remainingMs(ctx.deadlineUnixMs));
      const callDeadline = Date.now() + limitMs;
      const tried: string[] = [];
      const attempt = async (_attemptNumber: 1 | 2, signal: AbortSignal) => {
        const worker = workers.pick(tried);
        if (worker) tried.push(worker.workerId);
        const done = worker ? workers.begin(worker.workerId) : () => undefined;
        const started = performance.now();
        try {
          const reply = await bus.request(worker?.subject ?? subjects.retrieve, request, {
            timeoutMs: remainingMs(callDeadline),
            signal,
          });
          latency.record(performance.now() - started);
          return reply;
        } catch (error) {
          // A worker that failed (crashed, still listed until its presence expires) is passed
          // over for a while, whether or not the other attempt won: else the next call picks
          // the same two, and their failures open the breaker in front of every worker.
          if (worker && !signal.aborted && isInfrastructureError(error))
            workers.avoid(worker.workerId, AVOID_AFTER_LOST_HEDGE_MS);
          throw error;
        } finally {
          done();
        }
      };
      let reply;
      try {
        reply = await guard.call(
          async (signal) => {
            const outcome = await hedged(attempt, { delayMs: latency.hedgeDelayMs(limitMs / 2), signal });
            const [first] = tried;
            if (outcome.winner === 2 && first !== undefined) workers.avoid(first, AVOID_AFTER_LOST_HEDGE_MS);
            return outcome.value;
          },
          { deadlineUnixMs: ctx.deadlineUnixMs, capMs: budgetMs, signal: ctx.signal },
        );
      } catch (error) {
        throw explain(toHoplineError(error), limitMs);
      }
      return retrieveOutputOf(codecs.retrieveResponse.decode(reply.data));
    },
  };
}
