import type { Analysis__Output, Chunk__Output, QaEvent, ValidRequestContext } from '@hopline/contracts';

/** What every port call carries: who asks, until when, and the signal that cancels it. */
export interface CallContext {
  /** The question's id and verified scope, for the request the port sends. */
  request: ValidRequestContext;
  /** This call's deadline: the question's own, or tighter for a parallel branch. */
  deadlineUnixMs: number;
  signal: AbortSignal;
}

export interface AnalyzerPort {
  analyze(question: string, ctx: CallContext): Promise<Analysis__Output>;
}

export interface RetrieveInput {
  query: string;
  /** Hypothetical answer text for the vector path; '' when there is none. */
  hydeText: string;
  topK: number;
  /** 1-based hop number, stamped on the chunks. */
  hop: number;
  /**
   * Texts whose entities seed the entity graph beside the indexes (the hop's query and bridge,
   * the answers of the hops before it); empty when the `entityGraph` switch is off.
   */
  seeds: string[];
}

export interface RetrieveOutput {
  chunks: Chunk__Output[];
  /** A search path did not answer; the reasons say which and why. */
  degraded: boolean;
  degradedReasons: string[];
}

export interface RetrieverPort {
  retrieve(input: RetrieveInput, ctx: CallContext): Promise<RetrieveOutput>;
}

export interface RerankInput {
  query: string;
  chunks: readonly Chunk__Output[];
  /** Chunks to keep. */
  topN: number;
}

export interface RerankOutput {
  chunks: Chunk__Output[];
  /** The cross-encoder did not answer and a fallback ranked instead. */
  fallback: boolean;
  fallbackReason?: string;
}

export interface RerankerPort {
  rerank(input: RerankInput, ctx: CallContext): Promise<RerankOutput>;
}

type Payload<K extends keyof QaEvent & string> = { event: K } & { [P in K]-?: NonNullable<QaEvent[P]> };

/** One event of a question's stream without its sequence number, which the publisher assigns. */
export type QaEventDraft = { questionId: string; atUnixMs: number } & (
  | Payload<'route'>
  | Payload<'hopStarted'>
  | Payload<'retrieval'>
  | Payload<'hopAnswer'>
  | Payload<'token'>
  | Payload<'citations'>
  | Payload<'done'>
);

/** Receives the events in order; the reasoner waits for each before sending the next. */
export type EventSink = (event: QaEventDraft) => void | Promise<void>;

export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };
