import type { ReasoningSwitch } from '@hopline/reasoning';
import type { EvalQuestion } from '../data/eval-set.js';
import type { SystemRuns } from '../outcome.js';
import type { EvalRetrievalStack } from '../retrieval-stack.js';

/** What a mode asks over: an ingested corpus, k, and the per-question time limit. */
export interface ModeContext {
  stack: EvalRetrievalStack;
  k: number;
  questionTimeoutMs: number;
  /**
   * Reasoning rules and mechanisms switched off, for ablation: a mode that answers then runs
   * its multi-hop system alone, the one the switches are measured on.
   */
  switchedOff?: readonly ReasoningSwitch[];
}

export type AskQuestion = (question: EvalQuestion) => Promise<SystemRuns>;

/** One way of putting the questions to the systems, e.g. retrieval alone or the hop loop. */
export interface EvalMode {
  readonly name: string;
  /** Its systems answer, so they can abstain. */
  readonly answers: boolean;
  open(context: ModeContext): AskQuestion;
}
