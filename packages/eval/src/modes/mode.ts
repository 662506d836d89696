import type { MultihopQuestion } from '../dataset.js';
import type { KnowledgeBase } from '../knowledge-base.js';
import type { QuestionOutcome } from '../outcome.js';
import type { ReasoningFigures } from '../multihop/reasoning-summary.js';
import type { EvalRetrievalStack } from '../retrieval-stack.js';

/** What every eval mode gets: the questions, the pooled kb (already ingested) and the stack. */
export interface EvalContext {
  questions: readonly MultihopQuestion[];
  kb: KnowledgeBase;
  stack: EvalRetrievalStack;
  k: number;
  /** Per-question time limit. */
  questionTimeoutMs: number;
}

/** One way of answering the questions, e.g. a single retrieval or the hop loop. */
export interface EvalMode {
  readonly name: string;
  run(context: EvalContext): Promise<QuestionOutcome[]>;
  /** Figures beyond recall that the mode's outcomes carry (answers, hops, stop reasons). */
  summarize?(outcomes: readonly QuestionOutcome[], k: number): ReasoningFigures;
}
