import type { Clock, EventSink, QaEventDraft } from './ports.js';

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
export type EventBody = DistributiveOmit<QaEventDraft, 'questionId' | 'atUnixMs'>;

/**
 * A question's events, delivered to the sink one at a time in the order they were sent, even
 * when parallel branches send at once. `flush` waits for everything sent so far.
 */
export class EventStream {
  private tail: Promise<void> = Promise.resolve();

  constructor(
    private readonly questionId: string,
    private readonly sink: EventSink,
    private readonly clock: Clock,
  ) {}

  send(body: EventBody): Promise<void> {
    const draft = { questionId: this.questionId, atUnixMs: this.clock.now(), ...body } as QaEventDraft;
    this.tail = this.tail.then(() => this.sink(draft));
    return this.tail;
  }

  flush(): Promise<void> {
    return this.tail;
  }
}
