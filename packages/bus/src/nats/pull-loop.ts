import { NatsError, type Consumer, type ConsumerMessages, type JsMsg } from 'nats';
import type { BusErrorReporter, DurableConsumerOptions, Settlement, StreamMessage } from '../bus.js';
import { abortableDelay } from '../delay.js';
import { InFlight } from '../in-flight.js';
import { fromNatsError } from '../nats-errors.js';
import { fromMsgHdrs } from '../wire-headers.js';

// A pull waits this long for messages before the next; short, so that a pull the server still
// holds for a stopped consumer, or one lost with a connection, ends soon.
const PULL_EXPIRES_MS = 5_000;
// After a failed pull (NATS unreachable) the next waits this long.
const PULL_RETRY_MS = 500;

export interface PullLoopOptions {
  stream: string;
  report: BusErrorReporter;
  /** Whether the server takes a reason with a terminate. */
  termWithReason: boolean;
}

/**
 * Pulls from a durable consumer only as many messages as it has room to handle
 * (`maxInFlight`), so that no message waits in this process while its ack wait runs, and a
 * full consumer leaves the messages to other members. Each delivery's handler runs as soon as
 * it arrives; with `keepAlive` its delivery is marked in progress while the handler runs.
 */
export class PullLoop {
  private readonly inFlight = new InFlight();
  private readonly stopping = new AbortController();
  private readonly maxInFlight: number;
  private running = 0;
  private pull: ConsumerMessages | undefined;
  private wakeWhenRoom: (() => void) | undefined;
  private readonly loop: Promise<void>;

  constructor(
    private consumer: Consumer,
    /**
     * Makes the stream and the consumer again where they are missing, and gets the consumer: a
     * consumer deleted (by an operator, or lost with a server whose JetStream kept it in memory)
     * would otherwise leave every pull failing, and nothing pulled, for good.
     */
    private readonly reopen: () => Promise<Consumer>,
    private readonly options: DurableConsumerOptions,
    private readonly handler: (message: StreamMessage) => Promise<Settlement>,
    private readonly loopOptions: PullLoopOptions,
  ) {
    this.maxInFlight = options.maxInFlight ?? 1;
    this.loop = this.run();
  }

  /** Stops pulling and waits for the handlers in flight. */
  async stop(): Promise<void> {
    this.stopping.abort();
    this.wakeWhenRoom?.();
    this.pull?.stop();
    await this.loop;
    await this.inFlight.settled();
  }

  private async run(): Promise<void> {
    const { signal } = this.stopping;
    let failures = 0;
    while (!signal.aborted) {
      await this.room();
      if (signal.aborted) return;
      try {
        this.pull = await this.consumer.fetch({
          max_messages: this.maxInFlight - this.running,
          expires: PULL_EXPIRES_MS,
        });
        if (signal.aborted) {
          this.pull.stop();
          return;
        }
        for await (const delivery of this.pull) {
          failures = 0;
          this.running++;
          void this.inFlight.track(this.handle(delivery));
        }
        // A pull that ran its course, with or without messages: whatever failed before is over.
        failures = 0;
      } catch (error) {
        if (signal.aborted) return;
        // One report per outage, not one per retry.
        if (++failures === 1) this.report(error);
        await abortableDelay(PULL_RETRY_MS, signal);
        if (isLostConsumer(error) && !signal.aborted) {
          try {
            this.consumer = await this.reopen();
          } catch (reopenError) {
            if (failures === 1) this.report(reopenError);
          }
        }
      } finally {
        this.pull = undefined;
      }
    }
  }

  private report(error: unknown): void {
    const subject = this.loopOptions.stream;
    this.loopOptions.report(fromNatsError(error, { operation: 'consume', subject }), { operation: 'consume', subject });
  }

  private room(): Promise<void> {
    if (this.running < this.maxInFlight) return Promise.resolve();
    return new Promise((resolve) => {
      this.wakeWhenRoom = resolve;
    });
  }

  private async handle(delivery: JsMsg): Promise<void> {
    const message: StreamMessage = {
      subject: delivery.subject,
      data: delivery.data,
      headers: fromMsgHdrs(delivery.headers),
      deliveryCount: delivery.info.redeliveryCount,
    };
    const keepAlive = this.options.keepAlive
      ? setInterval(() => markInProgress(delivery), this.options.ackWaitMs / 3)
      : undefined;
    try {
      this.settle(delivery, await this.handler(message));
    } catch (error) {
      // Left unsettled: JetStream redelivers it once the ack wait runs out.
      this.loopOptions.report(error, { operation: 'consume', subject: message.subject });
    } finally {
      clearInterval(keepAlive);
      this.running--;
      const wake = this.wakeWhenRoom;
      this.wakeWhenRoom = undefined;
      wake?.();
    }
  }

  private settle(delivery: JsMsg, settlement: Settlement): void {
    switch (settlement.kind) {
      case 'ack':
        delivery.ack();
        return;
      case 'retry':
        delivery.nak(settlement.delayMs);
        return;
      case 'terminate':
        delivery.term(this.loopOptions.termWithReason ? settlement.reason : undefined);
        return;
      case 'abandon':
        return;
    }
  }
}

function markInProgress(delivery: JsMsg): void {
  try {
    delivery.working();
  } catch {
    // The connection is closed: nothing can mark it any more, and the stream will hand the
    // delivery to another consumer after the ack wait, which is what a lost consumer calls for.
  }
}

/** A pull refused because its consumer (or its stream) is gone, not because the server is away. */
function isLostConsumer(error: unknown): boolean {
  return (
    error instanceof NatsError &&
    (error.code === '404' || (error.code === '409' && /consumer deleted/i.test(error.message)))
  );
}
