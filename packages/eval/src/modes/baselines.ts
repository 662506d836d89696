import type { EvalContext, EvalMode } from './mode.js';
import type { QuestionOutcome } from '../outcome.js';

/** One hybrid retrieval per question, with the question as the query: the single-shot baseline. */
export const singleMode: EvalMode = {
  name: 'single',
  async run({ questions, kb, stack, k, questionTimeoutMs }: EvalContext): Promise<QuestionOutcome[]> {
    const outcomes: QuestionOutcome[] = [];
    for (const question of questions) {
      const started = performance.now();
      const result = await stack.retriever.retrieve({
        query: question.question,
        scope: { tenantId: kb.tenantId, kbIds: [kb.kbId] },
        topK: Math.max(k, 1),
        hop: 1,
        deadlineUnixMs: Date.now() + questionTimeoutMs,
      });
      const latencyMs = performance.now() - started;
      if (result.degraded)
        throw new Error(`question ${question.id}: retrieval degraded: ${result.degradedReasons.join('; ')}`);
      outcomes.push({
        id: question.id,
        dataset: question.dataset,
        goldDocIds: kb.goldDocIds(question),
        rankedDocIds: result.chunks.map((chunk) => chunk.docId),
        latencyMs,
      });
    }
    return outcomes;
  },
};
