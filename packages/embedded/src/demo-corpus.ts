import { fileURLToPath } from 'node:url';
import type { DurableStream } from '@hopline/bus';
import { loadDocuments } from '@hopline/cli';
import { codecs, ingestMessageId, subjects } from '@hopline/contracts';

export const DEMO_CORPUS_DIR = fileURLToPath(new URL('../demo-corpus/docs', import.meta.url));

/**
 * Puts the demo corpus into an empty kb through the same durable ingest stream the gateway
 * uses, then waits until the retrieval worker has indexed every document.
 */
export async function loadDemoCorpus(options: {
  ingest: DurableStream;
  /** Chunks the retrieval worker's index holds for a kb. */
  indexedChunks: (tenantId: string, kbId: string) => Promise<number>;
  tenantId: string;
  kbId: string;
  timeoutMs?: number;
}): Promise<{ loaded: boolean; documents: number }> {
  const { ingest, indexedChunks, tenantId, kbId } = options;
  if ((await indexedChunks(tenantId, kbId)) > 0) return { loaded: false, documents: 0 };
  const documents = loadDocuments(DEMO_CORPUS_DIR);
  for (const { sections, ...document } of documents) {
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
  const giveUpAt = Date.now() + (options.timeoutMs ?? 30_000);
  while ((await indexedChunks(tenantId, kbId)) < documents.length) {
    if (Date.now() > giveUpAt)
      throw new Error(`the demo corpus was not indexed within ${options.timeoutMs ?? 30_000} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return { loaded: true, documents: documents.length };
}
