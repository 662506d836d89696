import type { Bus, DurableConsumer, KeyValueStore, Settlement, StreamMessage } from '@hopline/bus';
import {
  codecs,
  HoplineError,
  isConflict,
  isTerminal,
  requireRequestContext,
  subjects,
  toHoplineError,
  type AskCommand__Output,
  type ValidRequestContext,
} from '@hopline/contracts';
import {
  EventPipeline,
  type EventBody,
  type QuestionLog,
  type QuestionMeta,
  type QuestionQueue,
  type QuestionWriter,
} from '@hopline/questions';
import type { HoplineMetrics, Logger } from '@hopline/telemetry';
import { trace } from '@opentelemetry/api';
import type { HopReasoner } from '@hopline/reasoning';
import { hopTimer } from './hop-timer.js';

export interface QuestionJobsDeps {
  /** Carries the cancel commands of the questions it runs. */
  bus: Bus;
  queue: QuestionQueue;
  log: QuestionLog;
  reasoner: HopReasoner;
  traces: KeyValueStore;
  logger: Pick<Logger, 'info' | 'warn' | 'error'>;
  metrics: Pick<HoplineMetrics, 'stopReasons' | 'hopsPerQuestion' | 'hopDuration'>;
  /** Questions this instance runs at once. */
  capacity: number;
  /** How long a question stays with this instance once it stops marking progress. */
  leaseMs: number;
}

export interface QuestionJobs {
  readonly inFlight: number;
  /** Stops taking questions and hands the running ones back to the queue, where another instance restarts them. */
  stop(): Promise<void>;
}

/** Past its deadline a question's last writes may still be retried this long while NATS is away. */
const WRITE_SLACK_MS = 5_000;
/** A question that failed without a word in its log (NATS away) comes back after this. */
const RETRY_UNWRITTEN_MS = 1_000;
const RESTART_REASON =
  'the hop-reasoner running this question stopped before it finished; another one runs it again from the start';

/**
 * The hop-reasoner's side of a question: it takes question jobs from the queue (no more than
 * its capacity), keeps each alive while it runs, and writes the question's events to its log.
 * The first event of every attempt says which it is: `accepted`, or `restarted` when an earlier
 * attempt's events are there (its hop-reasoner died). Every write follows the previous one, so
 * an attempt stops writing as soon as the log moved on without it: the gateway ended the
 * question (cancel, deadline), or another attempt took it over. A cancel command stops it at
 * once; a question whose log already ended when it is taken (cancelled while queued) is not run.
 */
export async function startQuestionJobs(deps: QuestionJobsDeps): Promise<QuestionJobs> {
  const running = new Set<AbortController>();
  let stopping = false;
  const handOver = new HoplineError(
    'unavailable',
    'the hop-reasoner is shutting down; another takes the question over',
  );

  const runJob = async (job: StreamMessage): Promise<Settlement> => {
    let ask: AskCommand__Output;
    let request: ValidRequestContext;
    try {
      ask = codecs.askCommand.decode(job.data);
      request = requireRequestContext(ask.ctx);
    } catch (error) {
      deps.logger.error('malformed question job dropped', { subject: job.subject, error });
      return { kind: 'terminate', reason: 'malformed AskCommand' };
    }
    if (stopping) return { kind: 'retry', delayMs: 0 };
    const { questionId } = request;
    trace.getActiveSpan()?.setAttribute('hopline.question_id', questionId);
    const question = new QuestionAttempt(deps, ask, request, job.deliveryCount);
    running.add(question.abort);
    const cancel = deps.bus.subscribe(subjects.cancel(questionId), {}, (message) => {
      const command = codecs.cancelCommand.decode(message.data);
      deps.logger.info('question cancelled', { questionId, reason: command.reason });
      question.abort.abort(new HoplineError('cancelled', command.reason || 'cancelled by the gateway'));
    });
    try {
      return await question.run();
    } catch (thrown) {
      if (question.abort.signal.reason === handOver) return { kind: 'retry', delayMs: 0 };
      return await question.settleFailure(thrown);
    } finally {
      cancel.unsubscribe();
      running.delete(question.abort);
    }
  };

  const consumer: DurableConsumer = await deps.queue.take(
    { capacity: deps.capacity, leaseMs: deps.leaseMs },
    runJob,
    (error, where) => deps.logger.warn('question queue failed', { ...where, error }),
  );

  return {
    get inFlight() {
      return running.size;
    },
    async stop() {
      stopping = true;
      for (const abort of running) abort.abort(handOver);
      await consumer.stop();
    },
  };
}

/** One attempt at one question, from taking its job to settling it. */
class QuestionAttempt {
  readonly abort = new AbortController();
  private readonly meta: QuestionMeta;
  private readonly writeUntil: number;
  /** The attempt's events after its first: the reasoning does not wait for each to be stored. */
  private events: EventPipeline | undefined;

  constructor(
    private readonly deps: QuestionJobsDeps,
    private readonly ask: AskCommand__Output,
    private readonly request: ValidRequestContext,
    private readonly delivery: number,
  ) {
    this.meta = {
      tenantId: request.scope.tenantId,
      userId: request.scope.userId,
      deadlineUnixMs: request.deadlineUnixMs,
    };
    this.writeUntil = request.deadlineUnixMs + WRITE_SLACK_MS;
  }

  private get questionId(): string {
    return this.request.questionId;
  }

  async run(): Promise<Settlement> {
    const { deps, questionId } = this;
    if (Date.now() >= this.request.deadlineUnixMs) {
      await this.begin({
        event: 'error',
        error: {
          code: 'deadline_exceeded',
          message: 'the question waited in the queue past its deadline',
          retryable: true,
        },
      });
      return { kind: 'ack' };
    }
    const writer = await this.begin();
    if (writer === undefined) return { kind: 'ack' };
    if (writer.attempt > 1) {
      deps.logger.warn('question restarted', { questionId, attempt: writer.attempt, delivery: this.delivery });
    }
    const observeHop = hopTimer(deps.metrics);
    const { done, trace: reasoning } = await deps.reasoner.answer(this.ask, {
      signal: this.abort.signal,
      emit: (event) => {
        observeHop(event);
        const { questionId: _questionId, atUnixMs: _atUnixMs, ...body } = event;
        return this.write(body);
      },
    });
    await (this.events as EventPipeline).flush();
    // Label values are lower-case, as dashboards and alerts spell them.
    deps.metrics.stopReasons.inc({ reason: done.stopReason.toLowerCase() });
    deps.metrics.hopsPerQuestion.observe({ route: done.route.toLowerCase() }, done.hops);
    // The answer is already out; a trace that cannot be stored costs the replay, not the answer.
    await deps.traces.put(questionId, codecs.reasoningTrace.encode(reasoning)).catch((error: unknown) => {
      deps.logger.warn('reasoning trace not stored', { questionId, error });
    });
    return { kind: 'ack' };
  }

  /**
   * Settles an attempt that ended without its answer. One that lost the question (the log ended
   * or moved on without it) leaves it as it is; one that failed ends it with the error.
   */
  async settleFailure(thrown: unknown): Promise<Settlement> {
    const { deps, questionId } = this;
    if (isConflict(thrown) || this.abort.signal.aborted) return this.leave();
    const error = toHoplineError(thrown);
    deps.logger.error('question failed', { questionId, error });
    if (this.events === undefined) return { kind: 'retry', delayMs: RETRY_UNWRITTEN_MS };
    try {
      // The events already sent go first; a pipeline that failed reports its failure here.
      await this.events.flush();
      this.events.push({
        event: 'error',
        error: { code: error.code, message: error.message, retryable: error.retryable },
      });
      await this.events.flush();
      return { kind: 'ack' };
    } catch (writeError) {
      if (isConflict(writeError)) return this.leave();
      deps.logger.error('question could not be ended', { questionId, error: writeError });
      return { kind: 'retry', delayMs: RETRY_UNWRITTEN_MS };
    }
  }

  /**
   * Writes the attempt's first event after whatever the log holds: `accepted` for the first
   * attempt, `restarted` for a later one, or `first` when given. Undefined when the question
   * already ended (cancelled before it was taken, or finished by an attempt that died before
   * it settled its job).
   */
  private async begin(first?: EventBody): Promise<QuestionWriter | undefined> {
    for (;;) {
      const head = await this.deps.log.head(this.questionId);
      if (head && isTerminal(head.event)) return undefined;
      const attempt = (head?.event.attempt ?? 0) + 1;
      const writer = this.deps.log.writer(this.questionId, this.meta, attempt, head);
      const opening: EventBody =
        first ??
        (attempt === 1
          ? { event: 'accepted', accepted: {} }
          : { event: 'restarted', restarted: { reason: RESTART_REASON } });
      try {
        await writer.append(opening, this.writeUntil);
        // A writer that lost the question stops the reasoning at once, not at its next event.
        this.events = new EventPipeline(writer, this.writeUntil, (error) => {
          if (isConflict(error)) this.abort.abort(error);
        });
        return writer;
      } catch (error) {
        if (!isConflict(error)) throw error;
      }
    }
  }

  /** After an abort this attempt writes nothing more: whoever aborted it owns the question's log. */
  private write(body: EventBody): void {
    if (this.abort.signal.aborted) throw this.abort.signal.reason;
    (this.events as EventPipeline).push(body);
  }

  /** The question is another's now; its job is done if its log ended, else another attempt holds it. */
  private async leave(): Promise<Settlement> {
    const head = await this.deps.log.head(this.questionId).catch(() => undefined);
    return head && isTerminal(head.event) ? { kind: 'ack' } : { kind: 'abandon' };
  }
}
