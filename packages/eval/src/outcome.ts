import type { EvalQuestion } from './data/eval-set.js';

/**
 * The systems a run compares, each on the same corpus and retriever: plain BM25 of the whole
 * question, one hybrid retrieval of it (single-shot; with `--mode multihop` it also answers from
 * one hop of the loop), and the hop loop (multi-hop).
 */
export const SYSTEMS = ['bm25', 'single-shot', 'multi-hop'] as const;
export type SystemName = (typeof SYSTEMS)[number];

/** One hop as the loop recorded it, in document terms. */
export interface HopTrace {
  hop: number;
  query: string;
  /** Document id of each chunk the hop kept after reranking, best first. */
  docIds: string[];
  answer: string;
  unknown: boolean;
}

/** What answering did: the loop's path, its answer and how well its citations hold. */
export interface AnswerTrace {
  route: string;
  stopReason: string;
  hops: HopTrace[];
  /** Sub-questions the analysis planned (0 when it planned none). */
  subQuestions: number;
  /** The synthesized text, citations and all. */
  text: string;
  /** Its short answer, the part scored ('' when it abstained). */
  answer: string;
  abstained: boolean;
  /** Cited claims the claim checker could read, and those the chunks they cite state. */
  claims: { checked: number; supported: number };
}

/** What one system did for one question. */
export interface SystemRun {
  /** Document id of each chunk it ranked, best first (the loop's: its final evidence). */
  rankedDocIds: string[];
  latencyMs: number;
  retrievalCalls: number;
  llmCalls: number;
  tokens: number;
  /** Present for a system that answers. */
  answered?: AnswerTrace;
}

export type SystemRuns = Partial<Record<SystemName, SystemRun>>;

export interface QuestionOutcome {
  question: EvalQuestion;
  runs: SystemRuns;
  /** The same question over a copy of the corpus without one of its gold documents. */
  withoutGold?: { removedDocId: string; runs: SystemRuns };
}
