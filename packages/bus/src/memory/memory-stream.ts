import { headers, jetstream, NoRespondersError, subjects, ValidationError } from '@hopline/contracts';
import { context, ROOT_CONTEXT } from '@opentelemetry/api';
import {
  DEFAULT_DUPLICATE_WINDOW_MS,
  type BusErrorReporter,
  type ConsumerProgress,
  type DurableConsumer,
  type DurableConsumerOptions,
  type DurablePublishOptions,
  type DurableStream,
  type DurableStreamOptions,
  type Settlement,
  type StreamMessage,
} from '../bus.js';
import { InFlight } from '../in-flight.js';
import { assertValidName } from '../names.js';
import { assertValidSubject, subjectMatches } from '../subjects.js';
import { decodeHeaders, encodeHeaders } from '../wire-headers.js';

interface StoredMessage {
  readonly subject: string;
  readonly data: Uint8Array;
  readonly headers: Uint8Array;
}

interface StreamConfig {
  subjects: string[];
  duplicateWindowMs: number;
}

/**
 * The in-memory stand-in for a JetStream stream with limits retention: messages stay stored,
 * a msgId seen within the duplicate window is not stored twice, and each durable consumer
 * keeps its own position and its own unsettled deliveries.
 */
export class MemoryStream {
  private lastSeq = 0;
  private readonly messages = new Map<number, StoredMessage>();
  private readonly msgIds = new Map<string, { seq: number; at: number }>();
  private readonly durables = new Map<string, DurableState>();

  constructor(
    readonly name: string,
    public config: StreamConfig,
  ) {}

  publish(subject: string, data: Uint8Array, options: DurablePublishOptions): { duplicate: boolean; seq: number } {
    if (!this.config.subjects.some((pattern) => subjectMatches(pattern, subject))) {
      // What JetStream answers when no stream stores the subject.
      throw new NoRespondersError(subject);
    }
    const now = Date.now();
    for (const [id, seen] of this.msgIds) {
      if (now - seen.at > this.config.duplicateWindowMs) this.msgIds.delete(id);
    }
    const seen = this.msgIds.get(options.msgId);
    if (seen !== undefined) return { duplicate: true, seq: seen.seq };
    const seq = ++this.lastSeq;
    this.msgIds.set(options.msgId, { seq, at: now });
    this.messages.set(seq, {
      subject,
      data: new Uint8Array(data),
      headers: encodeHeaders({ ...options.headers, [headers.msgId]: options.msgId }),
    });
    for (const durable of this.durables.values()) durable.pump();
    return { duplicate: false, seq };
  }

  /** The stored message at `seq`, if there is one and `filter` matches its subject. */
  read(seq: number, filter: string): StoredMessage | undefined {
    const message = this.messages.get(seq);
    return message !== undefined && subjectMatches(filter, message.subject) ? message : undefined;
  }

  get lastSequence(): number {
    return this.lastSeq;
  }

  /** Creates the durable consumer, or updates its delivery limits as JetStream allows. */
  durable(options: DurableConsumerOptions): DurableState {
    const existing = this.durables.get(options.durable);
    if (existing === undefined) {
      const created = new DurableState(this, options);
      this.durables.set(options.durable, created);
      return created;
    }
    if (existing.options.filterSubject !== options.filterSubject) {
      throw new ValidationError(
        `durable consumer ${options.durable} of ${this.name} filters ${existing.options.filterSubject}, not ${options.filterSubject}`,
      );
    }
    existing.options = options;
    return existing;
  }
}

interface Unsettled {
  deliveries: number;
  timer?: NodeJS.Timeout;
}

interface Member {
  busy: boolean;
  handle(seq: number, message: StoredMessage, deliveryCount: number): void;
}

/** One durable consumer: its position in the stream, its unsettled deliveries, the members sharing it. */
class DurableState {
  private nextSeq = 1;
  private readonly due: number[] = [];
  private readonly unsettled = new Map<number, Unsettled>();
  private readonly members = new Set<Member>();
  private pumpScheduled = false;

  constructor(
    private readonly stream: MemoryStream,
    public options: DurableConsumerOptions,
  ) {}

  join(member: Member): () => void {
    this.members.add(member);
    this.pump();
    return () => this.members.delete(member);
  }

  /** Hands due messages to idle members, on a later tick, as a pull consumer receives them. */
  pump(): void {
    if (this.pumpScheduled) return;
    this.pumpScheduled = true;
    setImmediate(() => {
      this.pumpScheduled = false;
      context.with(ROOT_CONTEXT, () => {
        for (const member of this.members) {
          if (member.busy) continue;
          const next = this.take();
          if (next === undefined) return;
          member.handle(next.seq, next.message, next.deliveries);
        }
      });
    });
  }

  settle(seq: number, settlement: Settlement): void {
    const entry = this.unsettled.get(seq);
    if (entry === undefined) return;
    clearTimeout(entry.timer);
    if (settlement.kind === 'retry') {
      this.redeliverLater(seq, entry, settlement.delayMs);
    } else {
      this.unsettled.delete(seq);
    }
  }

  /** A member finished one delivery, settled or not: it may take the next. */
  idle(): void {
    this.pump();
  }

  progress(): ConsumerProgress {
    const delivered = this.nextSeq - 1;
    const oldestUnsettled = Math.min(...this.unsettled.keys());
    return {
      settledThrough: Number.isFinite(oldestUnsettled) ? oldestUnsettled - 1 : delivered,
      lag: this.stream.lastSequence - delivered + this.unsettled.size,
    };
  }

  private take(): { seq: number; message: StoredMessage; deliveries: number } | undefined {
    while (this.due.length > 0) {
      const seq = this.due.shift() as number;
      const entry = this.unsettled.get(seq);
      const message = this.stream.read(seq, this.options.filterSubject);
      if (entry !== undefined && message !== undefined) return { seq, message, deliveries: this.deliver(seq, entry) };
    }
    while (this.nextSeq <= this.stream.lastSequence) {
      const seq = this.nextSeq++;
      const message = this.stream.read(seq, this.options.filterSubject);
      if (message === undefined) continue;
      const entry: Unsettled = { deliveries: 0 };
      this.unsettled.set(seq, entry);
      return { seq, message, deliveries: this.deliver(seq, entry) };
    }
    return undefined;
  }

  private deliver(seq: number, entry: Unsettled): number {
    entry.deliveries++;
    const delivery = entry.deliveries;
    entry.timer = setTimeout(() => {
      if (this.unsettled.get(seq) === entry && entry.deliveries === delivery) this.redeliverLater(seq, entry, 0);
    }, this.options.ackWaitMs);
    entry.timer.unref();
    return delivery;
  }

  /** After maxDeliver deliveries the stream gives up on a message, as JetStream does. */
  private redeliverLater(seq: number, entry: Unsettled, delayMs: number): void {
    if (entry.deliveries >= this.options.maxDeliver) {
      this.unsettled.delete(seq);
      return;
    }
    entry.timer = setTimeout(() => {
      this.due.push(seq);
      this.pump();
    }, delayMs);
    entry.timer.unref();
  }
}

/** The broker-wide stream with this name, created or updated to the options, as a DurableStream. */
export function openMemoryDurableStream(
  streams: Map<string, MemoryStream>,
  options: DurableStreamOptions,
  consumers: Set<DurableConsumer>,
  busReporter: BusErrorReporter,
): DurableStream {
  const name = options.name ?? jetstream.ingestStream;
  const config: StreamConfig = {
    subjects: options.subjects ?? [subjects.ingestAll],
    duplicateWindowMs: options.duplicateWindowMs ?? DEFAULT_DUPLICATE_WINDOW_MS,
  };
  assertValidName(name, 'stream name');
  config.subjects.forEach((subject) => assertValidSubject(subject, 'subscribe'));
  let stream = streams.get(name);
  if (stream === undefined) {
    stream = new MemoryStream(name, config);
    streams.set(name, stream);
  } else {
    stream.config = config;
  }
  const opened = stream;

  return {
    async publish(subject, data, publishOptions) {
      assertValidSubject(subject, 'publish');
      return opened.publish(subject, data, publishOptions);
    },

    async lastSequence() {
      return opened.lastSequence;
    },

    async consume(consumerOptions, handler, onError) {
      assertValidName(consumerOptions.durable, 'durable consumer name');
      assertValidSubject(consumerOptions.filterSubject, 'subscribe');
      const durable = opened.durable(consumerOptions);
      const report: BusErrorReporter = onError ?? busReporter;
      const inFlight = new InFlight();
      let stopped = false;
      const member: Member = {
        busy: false,
        handle(seq, stored, deliveryCount) {
          member.busy = true;
          const message: StreamMessage = {
            subject: stored.subject,
            data: new Uint8Array(stored.data),
            headers: decodeHeaders(stored.headers),
            deliveryCount,
          };
          const work = (async () => {
            try {
              durable.settle(seq, await handler(message));
            } catch (error) {
              // Left unsettled: it comes back once the ack wait runs out.
              report(error, { operation: 'consume', subject: message.subject });
            } finally {
              member.busy = false;
              if (!stopped) durable.idle();
            }
          })();
          void inFlight.track(work);
        },
      };
      const leave = durable.join(member);
      const consumer: DurableConsumer = {
        stop: async () => {
          stopped = true;
          consumers.delete(consumer);
          leave();
          await inFlight.settled();
        },
        progress: async () => durable.progress(),
      };
      consumers.add(consumer);
      return consumer;
    },
  };
}
