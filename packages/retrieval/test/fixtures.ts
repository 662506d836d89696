import type { IndexedChunk } from '../src/index.js';
import { dedupeKeyFor } from '../src/index.js';

/** A chunk of a one-chunk document, with every field a backend stores. */
export function chunkOf(overrides: Partial<IndexedChunk> & Pick<IndexedChunk, 'docId' | 'text'>): IndexedChunk {
  const chunkId = overrides.chunkId ?? `${overrides.docId}#0`;
  return {
    chunkId,
    tenantId: 't1',
    kbId: 'kb1',
    docVersion: 1,
    title: '',
    span: { start: 0, end: overrides.text.length },
    dedupeKey: dedupeKeyFor(chunkId, overrides.text),
    effectiveDate: '',
    sourceUri: '',
    ...overrides,
  };
}

export const never = new AbortController().signal;
