import { randomUUID } from 'node:crypto';
import type { BusHeaders, DurableStream, StoredMessage, ValuePayload } from '@hopline/bus';
import {
  codecs,
  type Codec,
  headers,
  isTerminal,
  subjects,
  ValidationError,
  type QaEvent,
  type QaEvent__Output,
  type QaEventBatch__Output,
} from '@hopline/contracts';
import { retryingTransient } from './transient.js';

/** Who asked a question, over which kbs, and until when it may run: stored with each of its events. */
export interface QuestionMeta {
  tenantId: string;
  userId: string;
  /** The kbs the question reads: only a key that may read every one of them reads the question. */
  kbIds: readonly string[];
  deadlineUnixMs: number;
}

/** One stored event with what the log knows about it. */
export interface LogEntry {
  event: QaEvent__Output;
  /** Its sequence in the events stream: what the next write expects to follow. */
  streamSeq: number;
  meta: QuestionMeta;
}

/** One QaEvent variant, without the envelope the writer adds (question id, seq, attempt, time). */
export type EventBody = Omit<QaEvent, 'questionId' | 'seq' | 'attempt' | 'atUnixMs'>;

const metaHeaders = (meta: QuestionMeta): BusHeaders => ({
  [headers.tenantId]: meta.tenantId,
  [headers.userId]: meta.userId,
  [headers.kbIds]: meta.kbIds.join(','),
  [headers.deadline]: String(meta.deadlineUnixMs),
});

/**
 * A message of the log as its writer gives it to the stream: encoded for NATS, or handed over
 * as the events a reader would decode when both share a process (the embedded mode), where
 * encoding and decoding them was most of the protobuf work of a question.
 */
function payloadOf<In, Out>(codec: Codec<In, Out>, message: In): ValuePayload {
  return { encode: () => codec.encode(message), decoded: () => codec.asDecoded(message) };
}

/**
 * The events one stored message holds, in order: several when it says how many (a batch),
 * else one, as a writer stores a single event (and as every event was stored before batches).
 */
function eventsOf(stored: StoredMessage): QaEvent__Output[] {
  if (stored.headers[headers.eventCount] === undefined) {
    return [stored.value === undefined ? codecs.qaEvent.decode(stored.data) : (stored.value as QaEvent__Output)];
  }
  const { events } =
    stored.value === undefined ? codecs.qaEventBatch.decode(stored.data) : (stored.value as QaEventBatch__Output);
  if (events.length === 0) throw new ValidationError(`an empty batch of events at stream sequence ${stored.seq}`);
  return events;
}

function entryOf(stored: StoredMessage): LogEntry {
  return {
    event: eventsOf(stored).at(-1) as QaEvent__Output,
    streamSeq: stored.seq,
    meta: {
      tenantId: stored.headers[headers.tenantId] ?? '',
      userId: stored.headers[headers.userId] ?? '',
      // Events stored before the kbs were: none, which no reader's key covers.
      kbIds: (stored.headers[headers.kbIds] ?? '').split(',').filter((kbId) => kbId !== ''),
      deadlineUnixMs: Number(stored.headers[headers.deadline] ?? 0),
    },
  };
}

/**
 * The questions' events as one log per question (a subject of the events stream). Every write
 * names the stream sequence of the event it follows, so that the log of a question stays one
 * gap-free sequence whoever writes to it: a hop-reasoner's attempt, or a later attempt that
 * took over from it. Only hop-reasoners write it; gateways read it, and ask for a question's
 * end through its QuestionEnds. A writer that finds the log moved on has lost the question to
 * another and stops.
 */
export class QuestionLog {
  constructor(private readonly events: DurableStream) {}

  /** The question's latest event, or undefined when it has none (or none any more). */
  async head(questionId: string): Promise<LogEntry | undefined> {
    const stored = await this.events.last(subjects.events(questionId));
    return stored === undefined ? undefined : entryOf(stored);
  }

  /**
   * The question's events after `afterSeq`, in order, ending with its terminal event; waits
   * for events not yet written until the signal aborts. Survives a NATS reconnect. `onlyNew`:
   * the question has no event yet (its job is enqueued after this follow is first read), so
   * nothing stored before is looked for.
   */
  async *follow(
    questionId: string,
    afterSeq: number,
    signal: AbortSignal,
    { onlyNew = false }: { onlyNew?: boolean } = {},
  ): AsyncGenerator<QaEvent__Output> {
    for await (const stored of this.events.follow(subjects.events(questionId), { signal, onlyNew })) {
      for (const event of eventsOf(stored)) {
        if (event.seq <= afterSeq) continue;
        yield event;
        if (isTerminal(event)) return;
      }
    }
  }

  /** A writer whose first event follows `head` (undefined: the question has no event yet). */
  writer(questionId: string, meta: QuestionMeta, attempt: number, head?: LogEntry): QuestionWriter {
    return new QuestionWriter(this.events, questionId, meta, attempt, head);
  }
}

/** Writes one writer's events of a question, each only right after the one it wrote before. */
export class QuestionWriter {
  private readonly id = randomUUID();
  private seq: number;
  private streamSeq: number;

  constructor(
    private readonly events: DurableStream,
    private readonly questionId: string,
    private readonly meta: QuestionMeta,
    /** The attempt its events belong to. */
    readonly attempt: number,
    head?: LogEntry,
  ) {
    this.seq = head?.event.seq ?? 0;
    this.streamSeq = head?.streamSeq ?? 0;
  }

  /** Appends the next event, as `appendAll` appends several. */
  append(body: EventBody, retryUntilUnixMs: number): Promise<void> {
    return this.appendAll([body], retryUntilUnixMs);
  }

  /**
   * Appends the next events, in order, as one message of the log (one event alone is stored as
   * it always was). Rejects with ConflictError when another writer wrote since this one's last
   * message; while NATS is unreachable it retries (the same message, so that a write whose
   * acknowledgement was lost is stored once) until `retryUntilUnixMs`, then rejects.
   */
  async appendAll(bodies: readonly EventBody[], retryUntilUnixMs: number): Promise<void> {
    const atUnixMs = Date.now();
    const events = bodies.map(
      (body, index) =>
        ({
          ...body,
          questionId: this.questionId,
          seq: this.seq + 1 + index,
          attempt: this.attempt,
          atUnixMs,
        }) as QaEvent,
    );
    const [single] = events;
    if (single === undefined) return;
    const batched = events.length > 1;
    const data = batched ? payloadOf(codecs.qaEventBatch, { events }) : payloadOf(codecs.qaEvent, single);
    const options = {
      msgId: `${this.questionId}:${this.id}:${single.seq}`,
      headers: {
        ...metaHeaders(this.meta),
        ...(batched ? { [headers.eventCount]: String(events.length) } : {}),
      },
      expectedLastSubjectSeq: this.streamSeq,
    };
    const { seq } = await retryingTransient(
      () => this.events.publish(subjects.events(this.questionId), data, options),
      retryUntilUnixMs,
    );
    this.seq += events.length;
    this.streamSeq = seq;
  }
}
