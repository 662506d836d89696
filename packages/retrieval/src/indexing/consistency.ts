import type { KbChunkCount } from '../backends/types.js';
import { partitionKey } from '../backends/types.js';

export interface KbCountComparison {
  tenantId: string;
  kbId: string;
  lexicalChunks: number;
  vectorChunks: number;
}

export interface ConsistencyReport {
  consistent: boolean;
  kbs: KbCountComparison[];
  /** The knowledge bases whose two sides disagree. */
  gaps: KbCountComparison[];
  /** One line per gap naming it and how to close it; empty when consistent. */
  messages: string[];
}

/**
 * Both sides index the same chunks (see the chunker), so their per-kb chunk counts must be
 * equal; a difference means a write reached one side only and was never redelivered.
 */
export function compareChunkCounts(
  lexical: { name: string; counts: readonly KbChunkCount[] },
  vector: { name: string; counts: readonly KbChunkCount[] },
): ConsistencyReport {
  const byKb = new Map<string, KbCountComparison>();
  const entry = (count: KbChunkCount): KbCountComparison => {
    const key = partitionKey(count.tenantId, count.kbId);
    let comparison = byKb.get(key);
    if (!comparison) {
      comparison = { tenantId: count.tenantId, kbId: count.kbId, lexicalChunks: 0, vectorChunks: 0 };
      byKb.set(key, comparison);
    }
    return comparison;
  };
  for (const count of lexical.counts) entry(count).lexicalChunks += count.chunks;
  for (const count of vector.counts) entry(count).vectorChunks += count.chunks;
  const kbs = [...byKb.values()].sort((a, b) => `${a.tenantId}/${a.kbId}`.localeCompare(`${b.tenantId}/${b.kbId}`));
  const gaps = kbs.filter((kb) => kb.lexicalChunks !== kb.vectorChunks);
  const messages = gaps.map((gap) => {
    const behind = gap.lexicalChunks < gap.vectorChunks ? lexical.name : vector.name;
    const difference = Math.abs(gap.lexicalChunks - gap.vectorChunks);
    return (
      `knowledge base ${gap.tenantId}/${gap.kbId}: ${lexical.name} holds ${gap.lexicalChunks} chunks, ` +
      `${vector.name} holds ${gap.vectorChunks} (${behind} is ${difference} behind). Reindex it by publishing ` +
      `its documents to the ingest stream again (pnpm ingest <folder|file>): a side that already holds a ` +
      `version ignores it, the side that misses it applies it.`
    );
  });
  return { consistent: gaps.length === 0, kbs, gaps, messages };
}
