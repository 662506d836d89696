import type { Endpoint } from '@hopline/bus';
import { codecs, subjects, UnavailableError, ValidationError } from '@hopline/contracts';
import type { LexicalBackend, VectorBackend } from '@hopline/retrieval';
import type { IngestProgress } from './ingest-progress.js';

/** How long a lookup waits for the index to apply what the gateway accepted before it asked. */
const CATCH_UP_WAIT_MS = 3_000;

/**
 * Answers whether a document is in the index, and at which version, once the index has
 * applied the ingest stream up to the sequence the asker names: a document accepted a moment
 * before is found, not reported missing. Live on either side is live: a delete that one side took
 * and the other did not (dead-lettered after an outage) leaves the document searchable there, and
 * the gateway must still let it be deleted again; the version is the higher of the two.
 */
export function documentLookupEndpoint(deps: {
  lexical: Pick<LexicalBackend, 'documentState'>;
  vector: Pick<VectorBackend, 'documentState'>;
  progress: Pick<IngestProgress, 'settledUpTo' | 'settledThrough'>;
}): Endpoint {
  return {
    name: 'document-lookup',
    subject: subjects.documentLookup,
    async handle(message) {
      const lookup = codecs.documentLookup.decode(message.data);
      if (!lookup.tenantId || !lookup.kbId || !lookup.docId)
        throw new ValidationError('a document lookup names a tenant, a kb and a document');
      if (!(await deps.progress.settledUpTo(lookup.afterSeq, CATCH_UP_WAIT_MS))) {
        throw new UnavailableError(
          `the index has applied the ingest stream up to ${deps.progress.settledThrough}, not yet ${lookup.afterSeq}`,
        );
      }
      const key = { tenantId: lookup.tenantId, kbId: lookup.kbId, docId: lookup.docId };
      const states = await Promise.all([deps.lexical.documentState(key), deps.vector.documentState(key)]);
      return {
        data: codecs.documentState.encode({
          exists: states.some((state) => state !== undefined && !state.deleted),
          version: Math.max(0, ...states.map((state) => state?.version ?? 0)),
        }),
      };
    },
  };
}
