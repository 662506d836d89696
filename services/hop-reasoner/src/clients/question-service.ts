import type { Bus, Endpoint, KeyValueStore, Subscription } from '@hopline/bus';
import {
  codecs,
  HoplineError,
  queueGroups,
  requireRequestContext,
  subjects,
  toHoplineError,
  type AskCommand__Output,
  type QaEvent,
} from '@hopline/contracts';
import type { HopReasoner } from '@hopline/reasoning';
import type { HoplineMetrics, Logger } from '@hopline/telemetry';
import { context, trace } from '@opentelemetry/api';

export interface QuestionServiceDeps {
  bus: Bus;
  reasoner: HopReasoner;
  traces: KeyValueStore;
  logger: Pick<Logger, 'info' | 'warn' | 'error'>;
  metrics: Pick<HoplineMetrics, 'stopReasons' | 'hopsPerQuestion'>;
  maxConcurrent: number;
}

export interface QuestionService {
  endpoint: Endpoint;
  readonly inFlight: number;
  /** Cancels every running question and waits for them to publish their last event. */
  stop(): Promise<void>;
}

/**
 * The hop-reasoner's side of a question: the ask endpoint acknowledges an AskCommand at once
 * (so the gateway learns quickly that someone took it), then runs the question in the
 * background, numbering its events from 1 on the question's events subject and listening on
 * its cancel subject. The reasoning trace is stored when the question ends, however it ends.
 */
export function createQuestionService(deps: QuestionServiceDeps): QuestionService {
  const running = new Map<string, { abort: AbortController; finished: Promise<void> }>();

  const run = async (ask: AskCommand__Output, questionId: string, abort: AbortController): Promise<void> => {
    let seq = 0;
    let ended = false;
    const publish = (event: Omit<QaEvent, 'seq'>) => {
      if (ended) return;
      seq += 1;
      if (event.done || event.error) ended = true;
      deps.bus.publish(subjects.events(questionId), codecs.qaEvent.encode({ ...event, seq }));
    };
    const cancel: Subscription = deps.bus.subscribe(subjects.cancel(questionId), {}, (message) => {
      const command = codecs.cancelCommand.decode(message.data);
      deps.logger.info('question cancelled', { questionId, reason: command.reason });
      abort.abort(new HoplineError('cancelled', command.reason || 'cancelled by the gateway'));
    });
    try {
      const { done, trace: reasoning } = await deps.reasoner.answer(ask, { signal: abort.signal, emit: publish });
      // Label values are lower-case, as dashboards and alerts spell them.
      deps.metrics.stopReasons.inc({ reason: done.stopReason.toLowerCase() });
      deps.metrics.hopsPerQuestion.observe({ route: done.route.toLowerCase() }, done.hops);
      // The answer is already out; a trace that cannot be stored costs the replay, not the answer.
      await deps.traces.put(questionId, codecs.reasoningTrace.encode(reasoning)).catch((error: unknown) => {
        deps.logger.warn('reasoning trace not stored', { questionId, error });
      });
    } catch (thrown) {
      const error = toHoplineError(thrown);
      deps.logger.error('question failed', { questionId, error });
      publish({
        questionId,
        atUnixMs: Date.now(),
        error: { code: error.code, message: error.message, retryable: error.retryable },
      });
    } finally {
      cancel.unsubscribe();
      await deps.bus.flush().catch(() => undefined);
    }
  };

  const endpoint: Endpoint = {
    name: 'ask',
    subject: subjects.ask,
    queue: queueGroups.hopReasoner,
    async handle(message) {
      const ask = codecs.askCommand.decode(message.data);
      const { questionId } = requireRequestContext(ask.ctx);
      if (!ask.question.trim()) throw new HoplineError('invalid_argument', 'the question is empty');
      if (running.size >= deps.maxConcurrent) {
        throw new HoplineError('resource_exhausted', `this hop-reasoner already runs ${running.size} questions`);
      }
      if (running.has(questionId))
        throw new HoplineError('invalid_argument', `question ${questionId} is already running`);
      trace.getActiveSpan()?.setAttribute('hopline.question_id', questionId);
      const abort = new AbortController();
      // The question outlives this request: run it in the request's trace context so that its
      // hops stay in the question's one trace.
      const activeContext = context.active();
      const finished = context
        .with(activeContext, () => run(ask, questionId, abort))
        // Nobody awaits a question but stop(): a failure to publish its end must not go unhandled.
        .catch((error: unknown) => deps.logger.error('question could not be ended cleanly', { questionId, error }))
        .finally(() => running.delete(questionId));
      running.set(questionId, { abort, finished });
      return { data: new Uint8Array() };
    },
  };

  return {
    endpoint,
    get inFlight() {
      return running.size;
    },
    async stop() {
      const questions = [...running.values()];
      for (const question of questions)
        question.abort.abort(new HoplineError('cancelled', 'the hop-reasoner is shutting down'));
      await Promise.all(questions.map((question) => question.finished));
    },
  };
}
