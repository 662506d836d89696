import { fileURLToPath } from 'node:url';
import type { DurableStream } from '@hopline/bus';
import { loadDocuments } from '@hopline/cli';
import { codecs, ingestMessageId, subjects } from '@hopline/contracts';
import type { HealthReport } from '@hopline/telemetry';

export const DEMO_CORPUS_DIR = fileURLToPath(new URL('../demo-corpus/docs', import.meta.url));

interface KbCount {
  tenantId: string;
  kbId: string;
  lexicalChunks: number;
}

function demoChunks(health: HealthReport, tenantId: string, kbId: string): number {
  const kbs = (health.details.kbs ?? []) as KbCount[];
  return kbs.find((kb) => kb.tenantId === tenantId && kb.kbId === kbId)?.lexicalChunks ?? 0;
}

/**
 * Puts the demo corpus into an empty kb through the same durable ingest stream the gateway
 * uses, then waits until the retrieval worker has indexed every document.
 */
export async function loadDemoCorpus(options: {
  ingest: DurableStream;
  workerHealth: () => Promise<HealthReport>;
  tenantId: string;
  kbId: string;
  timeoutMs?: number;
}): Promise<{ loaded: boolean; documents: number }> {
  const { ingest, workerHealth, tenantId, kbId } = options;
  if (demoChunks(await workerHealth(), tenantId, kbId) > 0) return { loaded: false, documents: 0 };
  const documents = loadDocuments(DEMO_CORPUS_DIR);
  for (const document of documents) {
    await ingest.publish(
      subjects.ingest(tenantId, kbId),
      codecs.ingestCommand.encode({ upsert: { ...document, tenantId, kbId } }),
      {
        msgId: ingestMessageId('upsert', tenantId, kbId, document.docId, document.version),
      },
    );
  }
  const giveUpAt = Date.now() + (options.timeoutMs ?? 30_000);
  while (demoChunks(await workerHealth(), tenantId, kbId) < documents.length) {
    if (Date.now() > giveUpAt)
      throw new Error(`the demo corpus was not indexed within ${options.timeoutMs ?? 30_000} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return { loaded: true, documents: documents.length };
}
