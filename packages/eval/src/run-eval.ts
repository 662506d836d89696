import type { EmbeddedLexicalBackendOptions, Embedder, FusionMethod, HybridRetrieverOptions } from '@hopline/retrieval';
import type { MultihopQuestion } from './dataset.js';
import { buildKnowledgeBase, ingestKnowledgeBase } from './knowledge-base.js';
import type { RecallSummary } from './metrics.js';
import { summarizeByDataset } from './metrics.js';
import type { EvalMode } from './modes/mode.js';
import type { QuestionOutcome } from './outcome.js';
import type { ReasoningFigures } from './multihop/reasoning-summary.js';
import { formatReasoning } from './multihop/reasoning-summary.js';
import { openEvalRetrievalStack } from './retrieval-stack.js';

export interface EvalReport extends RecallSummary, Partial<ReasoningFigures> {
  mode: string;
  k: number;
  byDataset: Record<string, RecallSummary>;
  kb: { documents: number; chunks: number; ingestMs: number };
  embedder: string;
  /** How the two paths were fused, and their weights. */
  fusion: FusionMethod;
  weights: { bm25: number; vector: number };
}

export interface RunEvalOptions {
  mode: EvalMode;
  k: number;
  questionTimeoutMs?: number;
  embedder?: Embedder;
  hybrid?: Partial<HybridRetrieverOptions>;
  lexical?: Pick<EmbeddedLexicalBackendOptions, 'bm25' | 'titleWeight' | 'tokenizer'>;
  /** Called with every question's outcome, e.g. to print failures. */
  onOutcomes?: (outcomes: readonly QuestionOutcome[]) => void;
}

/**
 * Builds the pooled knowledge base from every paragraph of the questions given, ingests it
 * through the indexer into fresh embedded indexes, runs the mode and summarises.
 */
export async function runEval(questions: readonly MultihopQuestion[], options: RunEvalOptions): Promise<EvalReport> {
  const kb = buildKnowledgeBase(questions);
  const stack = await openEvalRetrievalStack({
    ...(options.embedder ? { embedder: options.embedder } : {}),
    ...(options.hybrid ? { hybrid: options.hybrid } : {}),
    ...(options.lexical ? { lexical: options.lexical } : {}),
  });
  try {
    const ingest = await ingestKnowledgeBase(kb, stack.indexer);
    const consistency = await stack.indexer.checkConsistency();
    if (!consistency.consistent) throw new Error(`indexes disagree after ingest: ${consistency.messages.join(' ')}`);
    const outcomes = await options.mode.run({
      questions,
      kb,
      stack,
      k: options.k,
      questionTimeoutMs: options.questionTimeoutMs ?? 10_000,
    });
    options.onOutcomes?.(outcomes);
    const { overall, byDataset } = summarizeByDataset(outcomes, options.k);
    return {
      mode: options.mode.name,
      k: options.k,
      ...overall,
      byDataset,
      kb: { documents: ingest.documents, chunks: ingest.chunks, ingestMs: Math.round(ingest.ms) },
      embedder: stack.embedder.model,
      fusion: stack.hybridOptions.fusion,
      weights: { bm25: stack.hybridOptions.bm25Weight, vector: stack.hybridOptions.vectorWeight },
      ...options.mode.summarize?.(outcomes, options.k),
    };
  } finally {
    await stack.close();
  }
}

/** A table for people; `--json` prints the report object instead. */
export function formatReport(report: EvalReport): string {
  const row = (name: string, s: RecallSummary): string =>
    `${name.padEnd(18)}${String(s.questions).padStart(6)}${s.chainRecall.toFixed(1).padStart(10)}${s.supportRecall.toFixed(1).padStart(10)}` +
    `${s.p50Ms.toFixed(2).padStart(10)}${s.p95Ms.toFixed(2).padStart(10)}`;
  const lines = [
    `mode ${report.mode}, k = ${report.k}, embedder ${report.embedder}, ${report.fusion} fusion, weights bm25 ${report.weights.bm25} ` +
      `vector ${report.weights.vector}; kb of ${report.kb.documents} paragraphs ` +
      `(${report.kb.chunks} chunks) ingested in ${report.kb.ingestMs} ms`,
    `${'dataset'.padEnd(18)}${'n'.padStart(6)}${`chain@${report.k}`.padStart(10)}${`supp@${report.k}`.padStart(10)}${'p50 ms'.padStart(10)}${'p95 ms'.padStart(10)}`,
    ...Object.entries(report.byDataset).map(([name, summary]) => row(name, summary)),
    row('all', report),
  ];
  if (report.singleShot) lines.push(...formatReasoning(report as ReasoningFigures, report.byDataset, report.k));
  return lines.join('\n');
}
