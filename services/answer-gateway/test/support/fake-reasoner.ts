import type { Bus, DurableConsumer, DurableStream, Settlement, StreamMessage } from '@hopline/bus';
import {
  codecs,
  HoplineError,
  isConflict,
  isTerminal,
  subjects,
  type AskCommand__Output,
  type Citation,
  type Done,
  type QaEvent,
  type QaEvent__Output,
} from '@hopline/contracts';
import {
  endError,
  openQuestionStreams,
  questionEventsStream,
  QuestionWriter,
  type EventBody,
  type LogEntry,
  type QuestionMeta,
  type QuestionStreams,
} from '@hopline/questions';

export type { EventBody } from '@hopline/questions';

export interface QuestionControl {
  readonly ask: AskCommand__Output;
  /** Aborts when a gateway asks for the question's end. */
  readonly cancelled: AbortSignal;
  /** Writes the next event (seq counts on from `accepted`) unless the question was cancelled; returns whether it did. */
  emit(body: EventBody): boolean;
  /** Writes an event with an explicit seq into the log, bypassing the order (to test duplicate handling). */
  emitRaw(event: QaEvent): void;
  /** Goes on as the next attempt, as another hop-reasoner taking the question over would: writes `restarted`. */
  restart(reason: string): void;
  /** Resolves when the test calls `release(questionId)` or the question is cancelled. */
  gate(): Promise<void>;
}

export type Script = (control: QuestionControl) => Promise<void>;

interface QuestionRecord {
  ask: AskCommand__Output;
  /** Events written, `accepted` included. */
  emitted: number;
  /** Events the script tried to write after the end request arrived (the real reasoner must write none). */
  suppressedAfterCancel: number;
  /** The gateway's request to end the question, when it came. */
  cancel?: { reason: string; atMs: number };
  gates: Array<() => void>;
  /** Resolves once the script ran and its events were written. */
  done: Promise<void>;
}

// Long enough that no test sees a question handed to it twice.
const LEASE_MS = 60_000;

/**
 * A hop-reasoner stand-in on the bus: it takes question jobs as the real one does, writes
 * `accepted`, then a scripted sequence of events, and honours end requests as the real one
 * does: the script writes nothing more, and the end asked for is the question's last event (its
 * only one when the request came before the job).
 */
export class FakeReasoner {
  private readonly questions = new Map<string, QuestionRecord>();
  private consumer: DurableConsumer | undefined;
  private readonly following = new AbortController();
  private stopping = false;
  /** How long the fake waits before it writes `accepted` (a slow hop-reasoner). */
  acceptDelayMs = 0;

  private constructor(
    private readonly events: DurableStream,
    public script: Script,
  ) {}

  /** `capacity`: questions it runs at once (default: as many as come). */
  static async start(bus: Bus, script: Script, options: { capacity?: number } = {}): Promise<FakeReasoner> {
    const streams = await openQuestionStreams(bus);
    const reasoner = new FakeReasoner(await bus.durableStream(questionEventsStream), script);
    reasoner.consumer = await streams.queue.take({ capacity: options.capacity ?? 1_000, leaseMs: LEASE_MS }, (job) =>
      reasoner.accept(job, streams),
    );
    return reasoner;
  }

  get asks(): AskCommand__Output[] {
    return [...this.questions.values()].map((record) => record.ask);
  }

  record(questionId: string): QuestionRecord | undefined {
    return this.questions.get(questionId);
  }

  /** Opens the gates a script is waiting on for this question. */
  release(questionId: string): void {
    const record = this.questions.get(questionId);
    for (const open of record?.gates.splice(0) ?? []) open();
  }

  releaseAll(): void {
    for (const questionId of this.questions.keys()) this.release(questionId);
  }

  /** Stops taking questions; the running ones run to their end, no gate holding them any more. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.releaseAll();
    this.following.abort();
    await this.consumer?.stop();
  }

  private async accept(job: StreamMessage, { log, ends }: QuestionStreams): Promise<Settlement> {
    const ask = codecs.askCommand.decode(job.data);
    const questionId = ask.ctx?.questionId ?? '';
    const meta: QuestionMeta = {
      tenantId: ask.ctx?.scope?.tenantId ?? '',
      userId: ask.ctx?.scope?.userId ?? '',
      kbIds: ask.ctx?.scope?.kbIds ?? [],
      deadlineUnixMs: ask.ctx?.deadlineUnixMs ?? 0,
    };
    // As the real reasoner does, a question whose end was asked for before it was taken is not run.
    const requested = await ends.requested(questionId);
    if (requested !== undefined) {
      await log
        .writer(questionId, meta, 1)
        .append({ event: 'error', error: endError(requested) }, meta.deadlineUnixMs)
        .catch((error: unknown) => {
          if (!isConflict(error)) throw error;
        });
      return { kind: 'ack' };
    }
    const cancelled = new AbortController();
    const record: QuestionRecord = { ask, emitted: 0, suppressedAfterCancel: 0, gates: [], done: Promise.resolve() };
    this.questions.set(questionId, record);
    const stop = () => {
      cancelled.abort();
      for (const open of record.gates.splice(0)) open();
    };
    let endAsked: (reason: string) => void = () => {};
    const endRequest = new Promise<string>((resolve) => (endAsked = resolve));
    const holding = new AbortController();
    void (async () => {
      for await (const reason of ends.follow(questionId, AbortSignal.any([this.following.signal, holding.signal]))) {
        record.cancel = { reason, atMs: Date.now() };
        stop();
        endAsked(reason);
        return;
      }
    })().catch(() => undefined);
    if (this.acceptDelayMs > 0) await new Promise((resolve) => setTimeout(resolve, this.acceptDelayMs));
    let writer = log.writer(questionId, meta, 1);
    let lastWritten: QaEvent__Output | undefined;
    // The log's last event, read again while NATS is away, as the writes before it were retried.
    const readHead = async (): Promise<QaEvent__Output | undefined> => {
      for (;;) {
        try {
          return (await log.head(questionId))?.event;
        } catch (error) {
          if (!(error instanceof HoplineError && error.retryable) || Date.now() >= meta.deadlineUnixMs) throw error;
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      }
    };
    // Writes go out one after another, in the order the script asked for them.
    let writes = Promise.resolve();
    const write = (body: EventBody) => {
      writes = writes.then(async () => {
        if (cancelled.signal.aborted) return;
        try {
          // As the real reasoner does, a write is retried while NATS is away, up to the deadline.
          await writer.append(body, meta.deadlineUnixMs);
          lastWritten = await readHead();
          record.emitted += 1;
        } catch (error) {
          // Another attempt took the question over: like the real reasoner, write nothing more.
          if (!isConflict(error)) throw error;
          stop();
        }
      });
    };
    await writer.append({ event: 'accepted', accepted: {} }, meta.deadlineUnixMs);
    lastWritten = await readHead();
    record.emitted += 1;
    // The end asked for goes after the events already written, as the real reasoner writes it.
    void endRequest.then((reason) => {
      writes = writes.then(async () => {
        if (lastWritten && isTerminal(lastWritten)) return;
        await writer.append({ event: 'error', error: endError(reason) }, meta.deadlineUnixMs).catch(() => undefined);
      });
    });
    const control: QuestionControl = {
      ask,
      cancelled: cancelled.signal,
      emit: (body) => {
        if (cancelled.signal.aborted) {
          record.suppressedAfterCancel += 1;
          return false;
        }
        write(body);
        return true;
      },
      emitRaw: (event) => {
        writes = writes.then(async () => {
          const { seq } = await this.events.publish(subjects.events(questionId), codecs.qaEvent.encode(event), {
            msgId: `raw:${questionId}:${Date.now()}:${Math.random()}`,
          });
          // The fake's own writer carries on after the raw event, as if it had written it.
          const head: LogEntry | undefined = lastWritten && { event: lastWritten, streamSeq: seq, meta };
          writer = new QuestionWriter(this.events, questionId, meta, 1, head);
        });
      },
      restart: (reason) => {
        writes = writes.then(async () => {
          const head = await log.head(questionId);
          writer = log.writer(questionId, meta, (head?.event.attempt ?? 0) + 1, head);
        });
        write({ event: 'restarted', restarted: { reason } });
      },
      gate: () =>
        new Promise<void>((resolve) => {
          if (cancelled.signal.aborted || this.stopping) resolve();
          else record.gates.push(resolve);
        }),
    };
    record.done = new Promise<void>((resolve) => setImmediate(resolve))
      .then(() => this.script(control))
      .then(() => writes);
    await record.done;
    holding.abort();
    return { kind: 'ack' };
  }
}
export const citationsFor = (questionId: string, tenantId: string, kbId: string): Citation[] => [
  {
    index: 1,
    chunkId: `${kbId}:atlas#0`,
    docId: `${tenantId}-atlas`,
    kbId,
    title: `Project Atlas (${tenantId})`,
    snippet: `Project Atlas is owned by Dana Reyes (${tenantId} ${questionId.slice(0, 4)}).`,
    span: { start: 0, end: 60 },
    hop: 1,
  },
  {
    index: 2,
    chunkId: `${kbId}:people#3`,
    docId: `${tenantId}-people`,
    kbId,
    title: 'People directory',
    snippet: 'Dana Reyes works in the Materials Science department.',
    span: { start: 120, end: 172 },
    hop: 2,
    bridgeEntity: 'Dana Reyes',
  },
];

export function doneFor(ask: AskCommand__Output, overrides: Partial<Done> = {}): Done {
  const scope = ask.ctx?.scope;
  return {
    answer: 'Project Atlas is owned by Dana Reyes [1], who works in the Materials Science department [2].',
    citations: citationsFor(ask.ctx?.questionId ?? '', scope?.tenantId ?? '', scope?.kbIds[0] ?? ''),
    stopReason: 'SUFFICIENT',
    hops: 2,
    route: 'ITERATIVE',
    timings: { analyzeMs: 1, retrieveMs: 12, rerankMs: 3, reasonMs: 4, synthesizeMs: 5, totalMs: 25 },
    ...overrides,
  };
}

/** A two-hop answer: route, per hop started/retrieval/answer, streamed tokens, citations, done. */
export function twoHopScript(options: { gated?: boolean; tokens?: number; done?: Partial<Done> } = {}): Script {
  return async (q) => {
    const wait = async () => {
      if (options.gated) await q.gate();
    };
    q.emit({
      event: 'route',
      route: {
        route: 'ITERATIVE',
        complexity: 3,
        decidedBy: 'RULES',
        subQuestions: [{ text: 'Who owns project Atlas?' }],
      },
    });
    // Each hop's answer cites the chunk its citation below credits to that hop.
    const cited = doneFor(q.ask).citations?.map((citation) => citation.chunkId ?? '') ?? [];
    const hops = [
      {
        sub: 'Who owns project Atlas?',
        answer: 'Dana Reyes',
        next: 'Which department does Dana Reyes belong to?',
        cited: cited.slice(0, 1),
      },
      {
        sub: 'Which department does Dana Reyes belong to?',
        answer: 'Materials Science',
        next: '',
        cited: cited.slice(1),
      },
    ];
    for (const [index, hop] of hops.entries()) {
      await wait();
      const number = index + 1;
      q.emit({ event: 'hopStarted', hopStarted: { hop: number, maxHops: q.ask.maxHops, subQuestion: hop.sub } });
      q.emit({ event: 'retrieval', retrieval: { hop: number, hits: 8, chunkIds: ['c1', 'c2'], grade: 'RELEVANT' } });
      q.emit({
        event: 'hopAnswer',
        hopAnswer: {
          hop: number,
          query: hop.sub,
          answer: hop.answer,
          done: !hop.next,
          nextQuery: hop.next,
          confidence: 0.9 - index * 0.1,
          citedChunkIds: hop.cited,
          grade: 'RELEVANT',
        },
      });
    }
    const done = doneFor(q.ask, options.done);
    const words = (done.answer ?? '').split(/(?<= )/);
    const tokenCount = options.tokens ?? words.length;
    for (let i = 0; i < tokenCount; i++) {
      if (options.gated && i % 4 === 0) await wait();
      q.emit({ event: 'token', token: { text: words[i % words.length] ?? '' } });
    }
    await wait();
    q.emit({ event: 'citations', citations: { citations: done.citations ?? [] } });
    q.emit({ event: 'done', done });
  };
}
