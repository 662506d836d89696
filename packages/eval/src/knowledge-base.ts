import type { Document__Output } from '@hopline/contracts';
import type { Indexer } from '@hopline/retrieval';
import type { EvalDocument } from './data/eval-set.js';

/** The tenant and knowledge base the eval's corpus lives in. */
export const EVAL_SCOPE = { tenantId: 'eval', kbId: 'corpus' } as const;

function asDocument(document: EvalDocument): Document__Output {
  return {
    tenantId: EVAL_SCOPE.tenantId,
    kbId: EVAL_SCOPE.kbId,
    docId: document.docId,
    version: 1,
    title: document.title,
    text: document.text,
    effectiveDate: document.effectiveDate,
    sourceUri: '',
    metadata: {},
  };
}

/** Ingests every document through the indexer, as the retrieval-worker's consumer would. */
export async function ingestCorpus(
  documents: readonly EvalDocument[],
  indexer: Indexer,
  signal?: AbortSignal,
): Promise<{ documents: number; chunks: number; ms: number }> {
  const started = performance.now();
  let chunks = 0;
  for (const document of documents) {
    const result = await indexer.apply({ op: 'upsert', upsert: asDocument(document) }, signal);
    chunks += result.chunks;
  }
  const consistency = await indexer.checkConsistency(signal);
  if (!consistency.consistent) throw new Error(`indexes disagree after ingest: ${consistency.messages.join(' ')}`);
  return { documents: documents.length, chunks, ms: performance.now() - started };
}
