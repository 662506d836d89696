import { ConflictError, headers, jetstream, NoRespondersError, subjects, ValidationError } from '@hopline/contracts';
import { context, ROOT_CONTEXT } from '@opentelemetry/api';
import {
  DEFAULT_DUPLICATE_WINDOW_MS,
  type BusErrorReporter,
  type BusHeaders,
  type ConsumerProgress,
  type DurableConsumer,
  type DurableConsumerOptions,
  type DurablePublishOptions,
  type DurableStream,
  type DurableStreamOptions,
  type Settlement,
  type StoredMessage,
  type StreamMessage,
  type ValuePayload,
} from '../bus.js';
import { InFlight } from '../in-flight.js';
import { limitsOf, type JetStreamPolicy, type RetentionLimits } from '../jetstream-policy.js';
import { assertValidName } from '../names.js';
import { assertValidSubject, subjectMatches, subjectsOverlap } from '../subjects.js';
import { fromMsgHdrs, toMsgHdrs } from '../wire-headers.js';

/** A message published as a ValuePayload: the value its readers get, and what its bytes would take. */
interface StoredValue {
  readonly value: unknown;
  readonly byteLength: number;
  /** For a reader that asks for the bytes all the same. */
  readonly payload: ValuePayload;
}

interface StoredEntry {
  readonly seq: number;
  readonly subject: string;
  /** Bytes as published (each reader gets its own copy), or a value. */
  readonly data: Uint8Array | StoredValue;
  /** As a NATS client would read them back; each reader gets its own copy. */
  readonly headers: Readonly<BusHeaders>;
  /** What the headers take on the wire. */
  readonly headerBytes: number;
  readonly storedAt: number;
}

interface StreamConfig {
  subjects: string[];
  duplicateWindowMs: number;
  workQueue: boolean;
  limits: RetentionLimits;
}

/** What a message counts towards a stream's byte limit, as JetStream counts it. */
const sizeOf = (entry: StoredEntry) => entry.subject.length + entry.data.byteLength + entry.headerBytes;

/** A reader's own copy of the bytes; a value's are encoded on demand. */
const bytesOf = (data: Uint8Array | StoredValue): Uint8Array =>
  data instanceof Uint8Array ? new Uint8Array(data) : data.payload.encode();

/**
 * The headers a stored message keeps, checked and trimmed by nats.js's own implementation as on
 * a publish to NATS, and the bytes their wire encoding takes ("NATS/1.0", then "\r\nkey: value"
 * each, then "\r\n\r\n"). They are kept as read, not as bytes: in one process, encoding
 * them for every message and decoding them again for every reader was a few per cent of a
 * question's CPU.
 */
function storedHeaders(record: Readonly<BusHeaders>): { headers: BusHeaders; headerBytes: number } {
  const headers = fromMsgHdrs(toMsgHdrs(record));
  const entries = Object.entries(headers);
  // No headers, no header block at all.
  let headerBytes = entries.length === 0 ? 0 : 'NATS/1.0'.length + '\r\n\r\n'.length;
  for (const [key, value] of entries) {
    headerBytes += '\r\n: '.length + Buffer.byteLength(key) + Buffer.byteLength(value);
  }
  return { headers, headerBytes };
}

function toStoredMessage(entry: StoredEntry): StoredMessage {
  const { data } = entry;
  if (data instanceof Uint8Array) {
    return { subject: entry.subject, data: new Uint8Array(data), headers: { ...entry.headers }, seq: entry.seq };
  }
  return {
    subject: entry.subject,
    // Readers of a value mostly take the value: its bytes only for one that asks.
    get data() {
      return bytesOf(data);
    },
    headers: { ...entry.headers },
    seq: entry.seq,
    value: data.value,
  };
}

/**
 * The in-memory stand-in for a JetStream stream: a msgId seen within the duplicate window is
 * not stored twice, a publish can require the last sequence of its subject, each durable
 * consumer keeps its own position and unsettled deliveries, and a message stays until a purge
 * of its subject, in a work queue until a consumer is done with it, and at most as long and as
 * many bytes as its retention class allows (checked at each publish, oldest first): the
 * embedded mode runs for as long as a server does, and kept everything before.
 */
export class MemoryStream {
  private lastSeq = 0;
  private bytes = 0;
  /** Insertion order is publish order, so the oldest messages are first. */
  private readonly messages = new Map<number, StoredEntry>();
  /** Stream sequences per subject, ascending. */
  private readonly bySubject = new Map<string, number[]>();
  /** Insertion order is publish order, so the oldest ids are first. */
  private readonly msgIds = new Map<string, { seq: number; at: number }>();
  private readonly durables = new Map<string, DurableState>();
  /** Followers to wake, by the subject they follow. */
  private readonly followers = new Map<string, Set<() => void>>();

  constructor(
    readonly name: string,
    public config: StreamConfig,
  ) {}

  publish(
    subject: string,
    data: Uint8Array | ValuePayload,
    options: DurablePublishOptions,
  ): { duplicate: boolean; seq: number } {
    if (!this.config.subjects.some((pattern) => subjectMatches(pattern, subject))) {
      // What JetStream answers when no stream stores the subject.
      throw new NoRespondersError(subject);
    }
    const now = Date.now();
    this.forgetMsgIdsBefore(now - this.config.duplicateWindowMs);
    const seen = this.msgIds.get(options.msgId);
    if (seen !== undefined) return { duplicate: true, seq: seen.seq };
    const last = this.last(subject)?.seq ?? 0;
    if (options.expectedLastSubjectSeq !== undefined && options.expectedLastSubjectSeq !== last) {
      throw new ConflictError(`stream publish ${subject}: wrong last sequence: ${last}`);
    }
    // Everything that may throw (a value that cannot be built, headers NATS would refuse) before a
    // sequence is taken, so a refused publish leaves no gap in the stream.
    const stored = data instanceof Uint8Array ? new Uint8Array(data) : { ...data.decoded(), payload: data };
    const storedHeaderFields = storedHeaders({ ...options.headers, [headers.msgId]: options.msgId });
    const entry: StoredEntry = { seq: ++this.lastSeq, subject, data: stored, ...storedHeaderFields, storedAt: now };
    this.msgIds.set(options.msgId, { seq: entry.seq, at: now });
    this.messages.set(entry.seq, entry);
    this.bytes += sizeOf(entry);
    // Indexed before the limits apply: a message they drop at once (larger than the stream may
    // hold) leaves no index entry behind.
    const ofSubject = this.bySubject.get(subject);
    if (ofSubject === undefined) this.bySubject.set(subject, [entry.seq]);
    else ofSubject.push(entry.seq);
    this.dropBeyondLimits(now);
    for (const durable of this.durables.values()) durable.pump();
    for (const wake of this.followers.get(subject) ?? []) wake();
    return { duplicate: false, seq: entry.seq };
  }

  /** The stored message at `seq`, if there is one and `filter` matches its subject. */
  read(seq: number, filter: string): StoredEntry | undefined {
    const message = this.messages.get(seq);
    return message !== undefined && subjectMatches(filter, message.subject) ? message : undefined;
  }

  get lastSequence(): number {
    return this.lastSeq;
  }

  last(subject: string): StoredEntry | undefined {
    const seq = this.bySubject.get(subject)?.at(-1);
    return seq === undefined ? undefined : this.messages.get(seq);
  }

  /** The stored messages of `subject` after stream sequence `afterSeq`, oldest first. */
  after(subject: string, afterSeq: number): StoredEntry[] {
    const seqs = this.bySubject.get(subject) ?? [];
    // A reader asks for the few newest of a long subject each time one is stored.
    let low = 0;
    let high = seqs.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if ((seqs[middle] as number) <= afterSeq) low = middle + 1;
      else high = middle;
    }
    return seqs.slice(low).map((seq) => this.messages.get(seq) as StoredEntry);
  }

  purge(subject: string): void {
    for (const seq of [...(this.bySubject.get(subject) ?? [])]) this.remove(seq);
  }

  /** Calls `wake` after each message stored on `subject`; returns the function that stops it. */
  onStored(subject: string, wake: () => void): () => void {
    const wakes = this.followers.get(subject) ?? new Set<() => void>();
    this.followers.set(subject, wakes);
    wakes.add(wake);
    return () => {
      wakes.delete(wake);
      if (wakes.size === 0) this.followers.delete(subject);
    };
  }

  /** A work queue forgets a message once a consumer is done with it. */
  consumed(seq: number): void {
    if (this.config.workQueue) this.remove(seq);
  }

  /** Forgets the durable consumer, its position and unsettled deliveries with it. */
  deleteDurable(name: string): void {
    this.durables.delete(name);
  }

  /** Creates the durable consumer, or updates its delivery limits as JetStream allows. */
  durable(options: DurableConsumerOptions): DurableState {
    const existing = this.durables.get(options.durable);
    if (existing === undefined) {
      // A work queue hands each message to one consumer: JetStream refuses a second whose filter
      // takes some of the same subjects.
      const rival = this.config.workQueue
        ? [...this.durables.values()].find((other) =>
            subjectsOverlap(other.options.filterSubject, options.filterSubject),
          )
        : undefined;
      if (rival !== undefined)
        throw new ConflictError(
          `work queue ${this.name} already has durable consumer ${rival.options.durable} for the subjects ${options.durable} asks`,
        );
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

  private remove(seq: number): void {
    const entry = this.messages.get(seq);
    if (entry === undefined) return;
    this.messages.delete(seq);
    this.bytes -= sizeOf(entry);
    const ofSubject = this.bySubject.get(entry.subject) ?? [];
    ofSubject.splice(ofSubject.indexOf(seq), 1);
    if (ofSubject.length === 0) this.bySubject.delete(entry.subject);
  }

  private dropBeyondLimits(now: number): void {
    const { maxAgeMs, maxBytes } = this.config.limits;
    for (const oldest of this.messages.values()) {
      const tooOld = maxAgeMs > 0 && oldest.storedAt <= now - maxAgeMs;
      const tooMany = maxBytes > 0 && this.bytes > maxBytes;
      if (!tooOld && !tooMany) return;
      this.remove(oldest.seq);
    }
  }

  private forgetMsgIdsBefore(cutoff: number): void {
    for (const [id, seen] of this.msgIds) {
      if (seen.at >= cutoff) return;
      this.msgIds.delete(id);
    }
  }
}

interface Unsettled {
  deliveries: number;
  /** The ack wait of the latest delivery is running (not yet settled, not yet due again). */
  awaitingAck: boolean;
  timer?: NodeJS.Timeout;
}

interface Member {
  /** Whether it can take one more delivery now. */
  readonly hasRoom: boolean;
  handle(seq: number, message: StoredEntry, deliveryCount: number): void;
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

  /** Hands due messages to members with room, one each in turn, on a later tick, as a pull consumer receives them. */
  pump(): void {
    if (this.pumpScheduled) return;
    this.pumpScheduled = true;
    setImmediate(() => {
      this.pumpScheduled = false;
      context.with(ROOT_CONTEXT, () => {
        for (let handed = true; handed;) {
          handed = false;
          for (const member of this.members) {
            if (!member.hasRoom) continue;
            const next = this.take();
            if (next === undefined) return;
            member.handle(next.seq, next.message, next.deliveries);
            handed = true;
          }
        }
      });
    });
  }

  settle(seq: number, settlement: Settlement): void {
    const entry = this.unsettled.get(seq);
    if (entry === undefined || settlement.kind === 'abandon') return;
    clearTimeout(entry.timer);
    entry.awaitingAck = false;
    if (settlement.kind === 'retry') {
      this.redeliverLater(seq, entry, settlement.delayMs);
    } else {
      this.unsettled.delete(seq);
      this.stream.consumed(seq);
    }
  }

  /** Restarts the ack wait of the delivery in progress. */
  keepAlive(seq: number, delivery: number): void {
    const entry = this.unsettled.get(seq);
    if (entry?.deliveries === delivery && entry.awaitingAck) entry.timer?.refresh();
  }

  progress(): ConsumerProgress {
    const delivered = this.nextSeq - 1;
    const oldestUnsettled = Math.min(...this.unsettled.keys());
    return {
      settledThrough: Number.isFinite(oldestUnsettled) ? oldestUnsettled - 1 : delivered,
      lag: this.stream.lastSequence - delivered + this.unsettled.size,
    };
  }

  private take(): { seq: number; message: StoredEntry; deliveries: number } | undefined {
    while (this.due.length > 0) {
      const seq = this.due.shift() as number;
      const entry = this.unsettled.get(seq);
      const message = this.stream.read(seq, this.options.filterSubject);
      if (entry !== undefined && message !== undefined) return { seq, message, deliveries: this.deliver(seq, entry) };
      this.unsettled.delete(seq);
    }
    while (this.nextSeq <= this.stream.lastSequence) {
      const seq = this.nextSeq++;
      const message = this.stream.read(seq, this.options.filterSubject);
      if (message === undefined) continue;
      const entry: Unsettled = { deliveries: 0, awaitingAck: false };
      this.unsettled.set(seq, entry);
      return { seq, message, deliveries: this.deliver(seq, entry) };
    }
    return undefined;
  }

  private deliver(seq: number, entry: Unsettled): number {
    entry.deliveries++;
    entry.awaitingAck = true;
    const delivery = entry.deliveries;
    entry.timer = setTimeout(() => {
      if (this.unsettled.get(seq) === entry && entry.deliveries === delivery) this.redeliverLater(seq, entry, 0);
    }, this.options.ackWaitMs);
    entry.timer.unref();
    return delivery;
  }

  /** After maxDeliver deliveries the stream gives up on a message, as JetStream does. */
  private redeliverLater(seq: number, entry: Unsettled, delayMs: number): void {
    entry.awaitingAck = false;
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
  policy: JetStreamPolicy,
  options: DurableStreamOptions,
  consumers: Set<DurableConsumer>,
  busReporter: BusErrorReporter,
): DurableStream {
  const name = options.name ?? jetstream.ingestStream;
  const config: StreamConfig = {
    subjects: options.subjects ?? [subjects.ingestAll],
    duplicateWindowMs: options.duplicateWindowMs ?? DEFAULT_DUPLICATE_WINDOW_MS,
    workQueue: options.workQueue ?? false,
    limits: limitsOf(policy, options.retention ?? 'keep'),
  };
  assertValidName(name, 'stream name');
  config.subjects.forEach((subject) => assertValidSubject(subject, 'subscribe'));
  // JetStream refuses a stream whose subjects another stream already takes: a message would
  // belong to both.
  for (const [other, { config: taken }] of streams) {
    const clash =
      other === name
        ? undefined
        : config.subjects.find((wanted) => taken.subjects.some((subject) => subjectsOverlap(wanted, subject)));
    if (clash !== undefined)
      throw new ConflictError(`subjects overlap with an existing stream: ${clash} of ${name} and stream ${other}`);
  }
  let stream = streams.get(name);
  if (stream === undefined) {
    stream = new MemoryStream(name, config);
    streams.set(name, stream);
  } else {
    if (stream.config.workQueue !== config.workQueue) {
      throw new ValidationError(`stream ${name} cannot become${config.workQueue ? '' : ' no longer'} a work queue`);
    }
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
      if (consumerOptions.fromStart) opened.deleteDurable(consumerOptions.durable);
      const durable = opened.durable(consumerOptions);
      const report: BusErrorReporter = onError ?? busReporter;
      const maxInFlight = consumerOptions.maxInFlight ?? 1;
      const inFlight = new InFlight();
      let running = 0;
      let stopped = false;
      const member: Member = {
        get hasRoom() {
          return !stopped && running < maxInFlight;
        },
        handle(seq, stored, deliveryCount) {
          running++;
          const message: StreamMessage = {
            subject: stored.subject,
            data: bytesOf(stored.data),
            headers: { ...stored.headers },
            deliveryCount,
          };
          const keepAlive = consumerOptions.keepAlive
            ? setInterval(() => durable.keepAlive(seq, deliveryCount), consumerOptions.ackWaitMs / 3)
            : undefined;
          const work = (async () => {
            try {
              durable.settle(seq, await handler(message));
            } catch (error) {
              // Left unsettled: it comes back once the ack wait runs out.
              report(error, { operation: 'consume', subject: message.subject });
            } finally {
              clearInterval(keepAlive);
              running--;
              if (!stopped) durable.pump();
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

    async last(subject) {
      assertValidSubject(subject, 'publish');
      const entry = opened.last(subject);
      return entry === undefined ? undefined : toStoredMessage(entry);
    },

    follow(subject, { signal, onlyNew = false, onCaughtUp }) {
      assertValidSubject(subject, 'publish');
      return {
        async *[Symbol.asyncIterator]() {
          // As the shared reading of NATS does: what is stored from the first read on.
          let afterSeq = onlyNew ? opened.lastSequence : 0;
          const heldThrough = opened.lastSequence;
          let caughtUp = onCaughtUp;
          const catchUp = () => {
            const call = caughtUp;
            caughtUp = undefined;
            call?.();
          };
          let wake: () => void = () => {};
          const stopWaking = opened.onStored(subject, () => wake());
          const onAbort = () => wake();
          signal.addEventListener('abort', onAbort);
          try {
            while (!signal.aborted) {
              const stored = new Promise<void>((resolve) => (wake = resolve));
              for (const entry of opened.after(subject, afterSeq)) {
                if (entry.seq > heldThrough) catchUp();
                afterSeq = entry.seq;
                yield toStoredMessage(entry);
                if (signal.aborted) return;
              }
              catchUp();
              // A delivery arrives on a later tick, as from a NATS subscription.
              await stored;
              await new Promise<void>((resolve) => setImmediate(resolve));
            }
          } finally {
            stopWaking();
            signal.removeEventListener('abort', onAbort);
          }
        },
      };
    },

    async purge(subject) {
      assertValidSubject(subject, 'publish');
      opened.purge(subject);
    },
  };
}
