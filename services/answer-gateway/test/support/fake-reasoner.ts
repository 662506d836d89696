import type { Bus, ServiceHandle, Subscription } from '@hopline/bus';
import {
  codecs,
  queueGroups,
  subjects,
  type AskCommand__Output,
  type CancelCommand__Output,
  type Citation,
  type Done,
  type QaEvent,
} from '@hopline/contracts';

/** One QaEvent variant, without the envelope the fake adds (question id, seq, time). */
export type EventBody = Omit<QaEvent, 'questionId' | 'seq' | 'atUnixMs'>;

export interface QuestionControl {
  readonly ask: AskCommand__Output;
  /** Aborts when the gateway publishes the question's CancelCommand. */
  readonly cancelled: AbortSignal;
  /** Publishes the next event (seq counts from 1) unless the question was cancelled; returns whether it did. */
  emit(body: EventBody): boolean;
  /** Publishes an event with an explicit seq, even one already sent (to test duplicate handling). */
  emitRaw(event: QaEvent): void;
  /** Resolves when the test calls `release(questionId)` or the question is cancelled. */
  gate(): Promise<void>;
}

export type Script = (control: QuestionControl) => Promise<void>;

interface QuestionRecord {
  ask: AskCommand__Output;
  emitted: number;
  /** Events the script tried to publish after the cancel arrived (the real reasoner must publish none). */
  suppressedAfterCancel: number;
  cancel?: CancelCommand__Output & { atMs: number };
  gates: Array<() => void>;
  done: Promise<void>;
}

/**
 * A hop-reasoner stand-in on the bus: it acknowledges each ask as the real one does, then runs
 * a scripted sequence of events, and honours cancels by publishing nothing more.
 */
export class FakeReasoner {
  private readonly questions = new Map<string, QuestionRecord>();
  private service: ServiceHandle | undefined;
  private readonly cancelSubscriptions: Subscription[] = [];
  /** How long the ask's acknowledgement waits after the question is accepted (a busy reasoner). */
  ackDelayMs = 0;

  private constructor(
    private readonly bus: Bus,
    public script: Script,
  ) {}

  static async start(bus: Bus, script: Script): Promise<FakeReasoner> {
    const reasoner = new FakeReasoner(bus, script);
    reasoner.service = await bus.serve({
      name: 'hop-reasoner',
      version: '0.0.1',
      endpoints: [
        {
          name: 'ask',
          subject: subjects.ask,
          queue: queueGroups.hopReasoner,
          handle: async (request) => {
            reasoner.accept(codecs.askCommand.decode(request.data));
            if (reasoner.ackDelayMs > 0) await new Promise((resolve) => setTimeout(resolve, reasoner.ackDelayMs));
            return { data: new Uint8Array() };
          },
        },
      ],
    });
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

  async stop(): Promise<void> {
    this.releaseAll();
    for (const subscription of this.cancelSubscriptions) subscription.unsubscribe();
    await this.service?.stop();
  }

  private accept(ask: AskCommand__Output): void {
    const questionId = ask.ctx?.questionId ?? '';
    const cancelled = new AbortController();
    let seq = 0;
    const record: QuestionRecord = { ask, emitted: 0, suppressedAfterCancel: 0, gates: [], done: Promise.resolve() };
    this.questions.set(questionId, record);
    this.cancelSubscriptions.push(
      this.bus.subscribe(subjects.cancel(questionId), {}, (message) => {
        record.cancel = { ...codecs.cancelCommand.decode(message.data), atMs: Date.now() };
        cancelled.abort();
        for (const open of record.gates.splice(0)) open();
      }),
    );
    const publish = (event: QaEvent) => this.bus.publish(subjects.events(questionId), codecs.qaEvent.encode(event));
    const control: QuestionControl = {
      ask,
      cancelled: cancelled.signal,
      emit: (body) => {
        if (cancelled.signal.aborted) {
          record.suppressedAfterCancel += 1;
          return false;
        }
        seq += 1;
        record.emitted += 1;
        publish({ ...body, questionId, seq, atUnixMs: Date.now() } as QaEvent);
        return true;
      },
      emitRaw: (event) => publish(event),
      gate: () =>
        new Promise<void>((resolve) => {
          if (cancelled.signal.aborted) resolve();
          else record.gates.push(resolve);
        }),
    };
    // The ask is acknowledged first, as the real reasoner does; the script runs after.
    record.done = new Promise<void>((resolve) => setImmediate(resolve)).then(() => this.script(control));
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
    const hops = [
      { sub: 'Who owns project Atlas?', answer: 'Dana Reyes', next: 'Which department does Dana Reyes belong to?' },
      { sub: 'Which department does Dana Reyes belong to?', answer: 'Materials Science', next: '' },
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
