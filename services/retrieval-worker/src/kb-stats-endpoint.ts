import type { Endpoint } from '@hopline/bus';
import { codecs, subjects, UnavailableError, ValidationError } from '@hopline/contracts';
import type { LexicalBackend } from '@hopline/retrieval';
import type { IngestProgress } from './ingest-progress.js';

/** How long a stats request waits for the index to apply what was accepted before it was asked. */
const CATCH_UP_WAIT_MS = 3_000;

/**
 * Answers how many documents and chunks some of a tenant's knowledge bases hold, once the
 * index has applied the ingest stream up to the sequence the asker names, so that documents
 * accepted a moment before are counted.
 */
export function kbStatsEndpoint(deps: {
  lexical: LexicalBackend;
  progress: IngestProgress;
  workerId: string;
}): Endpoint {
  return {
    name: 'kb-stats',
    subject: subjects.kbStats,
    async handle(message) {
      const request = codecs.kbStatsRequest.decode(message.data);
      if (!request.tenantId || request.kbIds.some((kbId) => !kbId))
        throw new ValidationError('a kb stats request names a tenant and non-empty kb ids');
      if (!(await deps.progress.settledUpTo(request.afterSeq, CATCH_UP_WAIT_MS))) {
        throw new UnavailableError(
          `the index has applied the ingest stream up to ${deps.progress.settledThrough}, not yet ${request.afterSeq}`,
        );
      }
      const counts = await deps.lexical.countChunks();
      const kbs = request.kbIds.map((kbId) => {
        const count = counts.find((c) => c.tenantId === request.tenantId && c.kbId === kbId);
        return { kbId, documents: count?.documents ?? 0, chunks: count?.chunks ?? 0 };
      });
      return { data: codecs.kbStatsResponse.encode({ kbs, workerId: deps.workerId }) };
    },
  };
}
