import { fileURLToPath } from 'node:url';
import type { DurableStream } from '@hopline/bus';
import { loadDocuments, type DocumentInput } from '@hopline/cli';
import { codecs, ingestMessageId, subjects } from '@hopline/contracts';

export const DEMO_CORPUS_DIR = fileURLToPath(new URL('../demo-corpus/docs', import.meta.url));

/**
 * Puts the demo corpus into a kb through the same durable ingest stream the gateway uses, then
 * waits until the retrieval worker has indexed every document. Each document goes in unless
 * the index holds it at its version or a later one, so a load a stop cut short is completed on
 * the next start, and a demo document since deleted (its tombstone is later) stays deleted.
 * Documents are waited for by id and version, not by a count of chunks: a document may have
 * several.
 */
export async function loadDemoCorpus(options: {
  ingest: Pick<DurableStream, 'publish'>;
  /** The version of a document (or of its deletion) the retrieval worker's index holds; undefined when none. */
  indexedVersion: (document: { tenantId: string; kbId: string; docId: string }) => Promise<number | undefined>;
  tenantId: string;
  kbId: string;
  timeoutMs?: number;
}): Promise<{ loaded: boolean; documents: number }> {
  const { ingest, indexedVersion, tenantId, kbId } = options;
  const notIndexed = async (documents: DocumentInput[]): Promise<DocumentInput[]> => {
    const versions = await Promise.all(documents.map(({ docId }) => indexedVersion({ tenantId, kbId, docId })));
    return documents.filter((document, i) => {
      const version = versions[i];
      return version === undefined || version < document.version;
    });
  };
  const missing = await notIndexed(loadDocuments(DEMO_CORPUS_DIR));
  if (missing.length === 0) return { loaded: false, documents: 0 };
  for (const { sections, ...document } of missing) {
    await ingest.publish(
      subjects.ingest(tenantId, kbId),
      codecs.ingestCommand.encode({
        upsert: { ...document, tenantId, kbId, ...(sections ? { layout: { sections } } : {}) },
      }),
      {
        msgId: ingestMessageId('upsert', tenantId, kbId, document.docId, document.version),
      },
    );
  }
  const timeoutMs = options.timeoutMs ?? 30_000;
  const giveUpAt = Date.now() + timeoutMs;
  for (let waiting = missing; waiting.length > 0; waiting = await notIndexed(waiting)) {
    if (Date.now() > giveUpAt)
      throw new Error(
        `the demo corpus was not indexed within ${timeoutMs} ms (still missing: ${waiting.map((document) => document.docId).join(', ')})`,
      );
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return { loaded: true, documents: missing.length };
}
