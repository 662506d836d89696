import { UnavailableError } from '@hopline/contracts';
import { NatsError, type JetStreamManager, type MsgRequest } from 'nats';
import type { StoredMessage } from '../bus.js';
import { abortableDelay } from '../delay.js';
import { fromJetStreamError } from '../nats-errors.js';
import { fromMsgHdrs } from '../wire-headers.js';
import { readStream, type FollowTarget } from './follow.js';

// How long reading a subject's stored messages waits before it asks again after a failure.
const STORED_RETRY_MS = 250;

/** One follow's share of the tail: the messages of its subject, queued until it reads them. */
class SubjectReader {
  private readonly queue: StoredMessage[] = [];
  private failure: { error: Error } | undefined;
  private wake: (() => void) | undefined;

  push(message: StoredMessage): void {
    this.queue.push(message);
    this.wake?.();
  }

  fail(error: Error): void {
    this.failure ??= { error };
    this.wake?.();
  }

  /** The next message; undefined once the signal aborted; rejects once the tail failed. */
  async next(signal: AbortSignal): Promise<StoredMessage | undefined> {
    for (;;) {
      if (signal.aborted) return undefined;
      const message = this.queue.shift();
      if (message !== undefined) return message;
      if (this.failure) throw this.failure.error;
      await new Promise<void>((resolve) => {
        const done = () => {
          this.wake = undefined;
          signal.removeEventListener('abort', done);
          resolve();
        };
        this.wake = done;
        signal.addEventListener('abort', done, { once: true });
      });
    }
  }
}

/**
 * One reading of a whole stream per process, handed out by subject: a follow of one subject
 * (one question's events or end requests) costs no consumer of its own, only the reads of the
 * messages its subject held before it joined. Consumers made and deleted per question were
 * most of a question's NATS messages and of the server's work.
 *
 * The tail reads the stream from the sequence it had when it started, in order, with the
 * recovery of `readStream` (a lost consumer, a reconnect, a node loss). A follow joins it at
 * the sequence it has handed out (`through`): messages after that reach the follow from the
 * tail, those up to it are read from the stream one by one (none, for a new question). A follow
 * that wants only new messages joins a running tail as it is first read, with no read of the
 * stream: a new question's follow looked for stored messages that could not be there.
 */
export class StreamTail {
  private readonly readers = new Map<string, Set<SubjectReader>>();
  /** Every message up to this stream sequence was handed out before any follow that joins now. */
  private through = 0;
  /** Whether the tail reads now: a message stored from now on reaches a follow that joins now. */
  private live = false;
  /**
   * With a subject index, every subject with a message up to `through`, in the order last seen,
   * each with when it was (a subject may be here after its messages are gone, never the reverse).
   */
  private held: Map<string, number> | undefined;
  /** The stream's max age: a subject seen longer ago than this has no message left. 0: no limit. */
  private maxAgeMs = 0;
  private started: Promise<void> | undefined;
  private readonly stopping = new AbortController();
  private reading: Promise<void> = Promise.resolve();

  /** `indexSubjects`: keep which subjects the stream holds (`DurableStreamOptions.subjectIndex`). */
  constructor(
    private readonly target: FollowTarget,
    private readonly jsm: JetStreamManager,
    /** The timeout `jsm` was made with, which its failures name. */
    private readonly apiTimeoutMs: number,
    private readonly indexSubjects = false,
  ) {}

  /**
   * Every message stored on `subject`, oldest first, then each new one, until the signal aborts;
   * with `onlyNew`, while the tail reads, only those stored after its first `next()`.
   * `onCaughtUp` is called once those stored before are yielded.
   */
  async *follow(
    subject: string,
    signal: AbortSignal,
    { onlyNew = false, onCaughtUp }: { onlyNew?: boolean; onCaughtUp?: () => void } = {},
  ): AsyncGenerator<StoredMessage> {
    // Joins before anything is awaited, so that what its caller stores next reaches it.
    const joinedAtOnce = onlyNew && this.live;
    if (!joinedAtOnce) await this.start(signal);
    if (signal.aborted) return;
    // A tail stopped (the bus draining) reads no more: a follow joining it would wait for good.
    if (this.stopping.signal.aborted) throw new UnavailableError(`follow ${this.target.stream}: the bus is draining`);
    const reader = new SubjectReader();
    const readers = this.readers.get(subject) ?? new Set<SubjectReader>();
    this.readers.set(subject, readers.add(reader));
    // A subject the index does not hold had no message up to `through`: nothing to look for.
    const storedThrough = joinedAtOnce || this.held?.has(subject) === false ? 0 : this.through;
    try {
      let lastSeq = 0;
      for await (const stored of this.stored(subject, storedThrough, signal)) {
        lastSeq = stored.seq;
        yield stored;
      }
      if (signal.aborted) return;
      onCaughtUp?.();
      for (let next = await reader.next(signal); next !== undefined; next = await reader.next(signal)) {
        if (next.seq <= lastSeq) continue;
        lastSeq = next.seq;
        yield next;
      }
    } finally {
      readers.delete(reader);
      if (readers.size === 0) this.readers.delete(subject);
    }
  }

  /** Stops the reading; follows still reading fail with UnavailableError. */
  async stop(): Promise<void> {
    this.stopping.abort();
    await this.reading;
  }

  /** Resolves once the tail reads (at once after the first time), or when the signal aborts. */
  private start(signal: AbortSignal): Promise<void> {
    const started = (this.started ??= this.begin().catch((error: unknown) => {
      this.started = undefined;
      throw error;
    }));
    return new Promise<void>((resolve, reject) => {
      const onAbort = () => resolve();
      signal.addEventListener('abort', onAbort, { once: true });
      void started.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
    });
  }

  /** Learns where the stream ends now (retrying while NATS is away), then reads on from there. */
  private async begin(): Promise<void> {
    const { nc, stream, report } = this.target;
    let failures = 0;
    for (;;) {
      if (nc.isClosed() || this.stopping.signal.aborted) {
        throw new UnavailableError(`follow ${stream}: the NATS connection is closed`);
      }
      try {
        // The subjects listed are those held when the listing was made, which is after the
        // sequence read with them was stored: none up to `through` is missing.
        const info = await this.jsm.streams.info(stream, this.indexSubjects ? { subjects_filter: '>' } : undefined);
        this.through = info.state.last_seq;
        if (this.indexSubjects) {
          const now = Date.now();
          this.held = new Map(Object.keys(info.state.subjects ?? {}).map((subject) => [subject, now]));
          this.maxAgeMs = info.config.max_age / 1e6;
        }
        break;
      } catch (error) {
        const failure = fromJetStreamError(error, {
          operation: 'follow',
          subject: stream,
          timeoutMs: this.apiTimeoutMs,
        });
        if (++failures === 1) report(failure, { operation: 'follow', subject: stream });
        await abortableDelay(STORED_RETRY_MS, this.stopping.signal);
      }
    }
    this.live = true;
    this.reading = this.read();
  }

  private async read(): Promise<void> {
    try {
      for await (const message of readStream(this.target, { afterSeq: this.through }, this.stopping.signal)) {
        this.through = message.seq;
        if (this.held) this.hold(message.subject);
        this.readers.get(message.subject)?.forEach((reader) => reader.push(message));
      }
    } catch (error) {
      this.live = false;
      this.failAll(error as Error);
      // The next follow starts the reading again (or finds the connection closed).
      this.started = undefined;
      return;
    }
    this.live = false;
    this.failAll(new UnavailableError(`follow ${this.target.stream}: the bus is draining`));
  }

  /** Notes that `subject` holds a message now, and forgets those whose messages are surely gone. */
  private hold(subject: string): void {
    const held = this.held as Map<string, number>;
    const now = Date.now();
    held.delete(subject);
    held.set(subject, now);
    if (this.maxAgeMs <= 0) return;
    for (const [oldest, seenAt] of held) {
      if (now - seenAt <= this.maxAgeMs) break;
      held.delete(oldest);
    }
  }

  private failAll(error: Error): void {
    for (const readers of this.readers.values()) readers.forEach((reader) => reader.fail(error));
  }

  /**
   * The messages stored on `subject` up to the sequence `through`, oldest first, one read each,
   * retried while NATS is away. Only a closed connection ends the reading with an error.
   */
  private async *stored(subject: string, through: number, signal: AbortSignal): AsyncGenerator<StoredMessage> {
    const { nc, stream, report } = this.target;
    let cursor = 0;
    let failures = 0;
    while (cursor < through && !signal.aborted) {
      let stored;
      try {
        stored = await this.jsm.streams.getMessage(stream, nextOnSubject(subject, cursor + 1));
      } catch (error) {
        if (error instanceof NatsError && error.code === '404') return;
        if (signal.aborted) return;
        const failure = fromJetStreamError(error, { operation: 'follow', subject, timeoutMs: this.apiTimeoutMs });
        if (nc.isClosed()) throw failure;
        if (++failures === 1) report(failure, { operation: 'follow', subject });
        await abortableDelay(STORED_RETRY_MS, signal);
        continue;
      }
      if (stored.seq > through) return;
      failures = 0;
      cursor = stored.seq;
      yield { subject: stored.subject, data: stored.data, headers: fromMsgHdrs(stored.header), seq: stored.seq };
    }
  }
}

/**
 * The request for the first message on `subject` at or after `seq`. The server's message get
 * takes it since 2.9; nats.js 2.29 types it only for the direct get (which a replica that is
 * not the leader may answer from behind), and passes it on unchanged.
 */
function nextOnSubject(subject: string, seq: number): MsgRequest {
  return { next_by_subj: subject, seq } as unknown as MsgRequest;
}
