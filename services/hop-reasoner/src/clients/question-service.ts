import type { Bus, Endpoint, KeyValueStore, Subscription } from '@hopline/bus';
import {
  codecs,
  HoplineError,
  queueGroups,
  requireRequestContext,
  subjects,
  toHoplineError,
  type QaEvent,
  type ReasoningTrace,
  type ValidRequestContext,
} from '@hopline/contracts';
import type { HoplineMetrics, Logger } from '@hopline/telemetry';
import { context, trace } from '@opentelemetry/api';
import type { EventSink } from '../ports.js';

/** What the service needs from the reasoning core: answer one question, emitting its events. */
export interface QuestionAnswerer {
  answer(
    question: { request: ValidRequestContext; question: string; maxHops: number },
    options: { signal: AbortSignal; emit: EventSink },
  ): Promise<ReasoningTrace>;
}

export interface QuestionServiceDeps {
  bus: Bus;
  answerer: QuestionAnswerer;
  traces: KeyValueStore;
  logger: Pick<Logger, 'info' | 'warn' | 'error'>;
  metrics: Pick<HoplineMetrics, 'stopReasons' | 'hopsPerQuestion'>;
  maxConcurrent: number;
  defaultMaxHops: number;
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

  const run = async (request: ValidRequestContext, question: string, maxHops: number, abort: AbortController): Promise<void> => {
    let seq = 0;
    const publish = (event: Omit<QaEvent, 'seq'>) => {
      seq += 1;
      deps.bus.publish(subjects.events(request.questionId), codecs.qaEvent.encode({ ...event, seq }));
    };
    const cancel: Subscription = deps.bus.subscribe(subjects.cancel(request.questionId), {}, (message) => {
      const command = codecs.cancelCommand.decode(message.data);
      deps.logger.info('question cancelled', { questionId: request.questionId, reason: command.reason });
      abort.abort(new HoplineError('cancelled', command.reason || 'cancelled by the gateway'));
    });
    try {
      const reasoning = await deps.answerer.answer({ request, question, maxHops }, { signal: abort.signal, emit: publish });
      await deps.traces.put(request.questionId, codecs.reasoningTrace.encode(reasoning));
      const stopReason = typeof reasoning.stopReason === 'string' ? reasoning.stopReason : 'STOP_REASON_UNSPECIFIED';
      deps.metrics.stopReasons.inc({ reason: stopReason });
      deps.metrics.hopsPerQuestion.observe({ route: String(reasoning.analysis?.route ?? 'unknown') }, reasoning.hops?.length ?? 0);
    } catch (thrown) {
      const error = toHoplineError(thrown);
      deps.logger.error('question failed', { questionId: request.questionId, error });
      publish({ questionId: request.questionId, atUnixMs: Date.now(), error: { code: error.code, message: error.message, retryable: error.retryable } });
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
      const request = requireRequestContext(ask.ctx);
      if (!ask.question.trim()) throw new HoplineError('invalid_argument', 'the question is empty');
      if (running.size >= deps.maxConcurrent) {
        throw new HoplineError('resource_exhausted', `this hop-reasoner already runs ${running.size} questions`);
      }
      if (running.has(request.questionId)) throw new HoplineError('invalid_argument', `question ${request.questionId} is already running`);
      trace.getActiveSpan()?.setAttribute('hopline.question_id', request.questionId);
      const abort = new AbortController();
      // The question outlives this request: run it in the request's trace context so that its
      // hops stay in the question's one trace.
      const activeContext = context.active();
      const finished = context
        .with(activeContext, () => run(request, ask.question, ask.maxHops > 0 ? ask.maxHops : deps.defaultMaxHops, abort))
        .finally(() => running.delete(request.questionId));
      running.set(request.questionId, { abort, finished });
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
      for (const question of questions) question.abort.abort(new HoplineError('cancelled', 'the hop-reasoner is shutting down'));
      await Promise.all(questions.map((question) => question.finished));
    },
  };
}
