import { loadDocuments, type DocumentInput } from '@hopline/cli';
import { codecs } from '@hopline/contracts';
import { describe, expect, it } from 'vitest';
import { DEMO_CORPUS_DIR, loadDemoCorpus } from '../src/demo-corpus.js';

const demoDocuments = loadDocuments(DEMO_CORPUS_DIR);

/**
 * An ingest stream and the retrieval worker's index behind it: each document published is
 * indexed `indexMs` later, one after the other, as a worker applies a backlog. `indexed` holds
 * the version of each document in the index.
 */
function streamAndIndex(indexed: Map<string, number>, indexMs = 10) {
  const published: string[] = [];
  let backlog = Promise.resolve();
  return {
    published,
    ingest: {
      async publish(_subject: string, data: Uint8Array | object) {
        const { upsert } = codecs.ingestCommand.decode(data as Uint8Array);
        const docId = upsert?.docId ?? '';
        published.push(docId);
        backlog = backlog
          .then(() => new Promise((resolve) => setTimeout(resolve, indexMs)))
          .then(() => void indexed.set(docId, Number(upsert?.version)));
        return { duplicate: false, seq: published.length };
      },
    },
    indexedVersion: async ({ docId }: { docId: string }) => indexed.get(docId),
  };
}

describe('embedded demo corpus', () => {
  it('embedded - loading the demo corpus waits until every document is indexed at its version, not until its chunks outnumber its documents', async () => {
    const indexed = new Map<string, number>();
    const { ingest, indexedVersion, published } = streamAndIndex(indexed);
    const result = await loadDemoCorpus({ ingest, indexedVersion, tenantId: 'dev', kbId: 'demo' });
    expect(result).toEqual({ loaded: true, documents: demoDocuments.length });
    expect(published).toHaveLength(demoDocuments.length);
    expect(Object.fromEntries(indexed)).toEqual(
      Object.fromEntries(demoDocuments.map((document) => [document.docId, document.version])),
    );
  });

  it('embedded - a load a stop cut short is completed: only the documents missing from the index go in, and one deleted since stays deleted', async () => {
    const [deleted, ...rest] = demoDocuments as [DocumentInput, ...DocumentInput[]];
    const alreadyIndexed = rest.slice(0, 5);
    const indexed = new Map(alreadyIndexed.map((document) => [document.docId, document.version]));
    // A deletion's version is never below the version it deletes.
    indexed.set(deleted.docId, deleted.version + 1);
    const { ingest, indexedVersion, published } = streamAndIndex(indexed);
    const result = await loadDemoCorpus({ ingest, indexedVersion, tenantId: 'dev', kbId: 'demo' });
    const missing = rest.slice(5).map((document) => document.docId);
    expect(result).toEqual({ loaded: true, documents: missing.length });
    expect(published).toEqual(missing);

    // Once all are in, a start sends nothing.
    published.length = 0;
    expect(await loadDemoCorpus({ ingest, indexedVersion, tenantId: 'dev', kbId: 'demo' })).toEqual({
      loaded: false,
      documents: 0,
    });
    expect(published).toEqual([]);
  });
});
