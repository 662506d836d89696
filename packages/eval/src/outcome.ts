/** What one question's retrieval produced, in the terms the metrics need. */
export interface QuestionOutcome {
  id: string;
  dataset: string;
  /** Document ids of the gold paragraphs. */
  goldDocIds: readonly string[];
  /** Document id of each retrieved chunk, best first. */
  rankedDocIds: readonly string[];
  latencyMs: number;
  /** What the hop loop did, for modes that run it. */
  reasoning?: ReasoningOutcome;
}

/** What the hop loop did for one question, beside the evidence it handed to synthesis. */
export interface ReasoningOutcome {
  /** The short answer of the synthesized text ('' when it abstained). */
  answer: string;
  /** The gold answer and its aliases. */
  goldAnswers: string[];
  hops: number;
  llmCalls: number;
  stopReason: string;
  route: string;
  /** Document ids a single retrieval of the question returned, in the same run. */
  singleShotDocIds: string[];
}
