import type { BusErrorReporter, DurableConsumer, DurableStream, Settlement, StreamMessage } from '@hopline/bus';
import { codecs, jetstream, subjects, type AskCommand } from '@hopline/contracts';
import { retryingTransient } from './transient.js';

// A question whose hop-reasoners died this often is not handed out again: the attempt that
// would ask for another ends it instead, and where none could, the gateway's deadline does.
const MAX_ATTEMPTS = 5;

export interface TakeOptions {
  /** Questions this hop-reasoner runs at once; it takes no more while it has no room. */
  capacity: number;
  /** How long a question stays with a hop-reasoner that stopped marking progress before another takes it. */
  leaseMs: number;
}

/**
 * The queue of question jobs. The gateway enqueues each question once (its id is the message
 * id) and withdraws one it gave up on before anybody took it; the hop-reasoners share one
 * durable consumer, each taking only as many jobs as it has room for and keeping each alive
 * while it runs, so that the jobs of one that died go to another after the lease.
 */
export class QuestionQueue {
  /** Deliveries of one job at most: after the last, the stream hands it out no more. */
  readonly maxAttempts = MAX_ATTEMPTS;

  constructor(private readonly jobs: DurableStream) {}

  /**
   * Stores the question's job, again after each transient failure until `retryUntilUnixMs` (by
   * default one try): a cluster that lost a node takes seconds to elect the stream's new leader. The question id is
   * the message id, so a retry after a lost acknowledgement stores it once. Rejects with
   * ValidationError when the ask names no valid question id.
   */
  async enqueue(ask: AskCommand, retryUntilUnixMs = 0): Promise<void> {
    const questionId = ask.ctx?.questionId ?? '';
    const job = codecs.askCommand.encode(ask);
    await retryingTransient(
      () => this.jobs.publish(subjects.ask(questionId), job, { msgId: questionId }),
      retryUntilUnixMs,
    );
  }

  /** Removes the question's job if nobody finished it yet: a gateway that gave up on it. */
  async withdraw(questionId: string): Promise<void> {
    await this.jobs.purge(subjects.ask(questionId));
  }

  /** Hands jobs to `handler`; its settlement decides whether the job is done, comes back, or leaves. */
  take(
    options: TakeOptions,
    handler: (job: StreamMessage) => Promise<Settlement>,
    onError?: BusErrorReporter,
  ): Promise<DurableConsumer> {
    return this.jobs.consume(
      {
        durable: jetstream.questionConsumer,
        filterSubject: subjects.askAll,
        maxDeliver: MAX_ATTEMPTS,
        ackWaitMs: options.leaseMs,
        maxInFlight: options.capacity,
        keepAlive: true,
      },
      handler,
      onError,
    );
  }
}
