import type { Chunk__Output } from '@hopline/contracts';

/** A chunk as retrieval returns it, with only what a test cares about filled in. */
export function chunk(chunkId: string, title: string, text: string, hop = 1): Chunk__Output {
  return {
    chunkId,
    tenantId: 't1',
    kbId: 'kb1',
    docId: `doc-${chunkId}`,
    docVersion: 1,
    title,
    text,
    span: { start: 0, end: text.length },
    dedupeKey: chunkId,
    scores: null,
    foundBy: 'BM25',
    hop,
    effectiveDate: '',
    sourceUri: '',
  };
}
