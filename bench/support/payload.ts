import type { Chunk, RequestContext } from '@hopline/contracts';

/**
 * The ~20 KB payload the transport benchmarks send: ten chunks as a hop hands them on, so that
 * the bus and gRPC figures measure the same work.
 */
export function sampleChunks(rerankScores = false): Chunk[] {
  const sentence = 'The reranker scores each candidate chunk against the hop question and keeps the best ones. ';
  return Array.from({ length: 10 }, (_, i) => ({
    chunkId: `doc-${i}#chunk-${i}`,
    tenantId: 'tenant-1',
    kbId: 'kb-main',
    docId: `doc-${i}`,
    docVersion: 3,
    title: `Document ${i}`,
    text: sentence.repeat(21),
    span: { start: i * 1000, end: i * 1000 + 1900 },
    dedupeKey: `doc-${i}#chunk-${i}`,
    scores: {
      bm25: 12.5 - i,
      vector: 0.8 - i / 100,
      rrf: 1 / (61 + i),
      ...(rerankScores ? { rerank: 0.9 - i / 20 } : {}),
    },
    foundBy: 'HYBRID',
    hop: 1,
  }));
}

export const sampleQuestion = 'which department does the owner of project A belong to?';

export function sampleContext(deadlineInMs: number): RequestContext {
  return {
    questionId: 'q-bench',
    scope: { tenantId: 'tenant-1', userId: 'u-1', kbIds: ['kb-main'] },
    deadlineUnixMs: Date.now() + deadlineInMs,
  };
}
