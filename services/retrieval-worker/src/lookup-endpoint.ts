import type { Endpoint } from '@hopline/bus';
import { codecs, subjects, UnavailableError, ValidationError } from '@hopline/contracts';
import type { LexicalBackend } from '@hopline/retrieval';
import type { IngestProgress } from './ingest-progress.js';

/** How long a lookup waits for the index to apply what the gateway accepted before it asked. */
const CATCH_UP_WAIT_MS = 3_000;

/**
 * Answers whether a document is in the index, and at which version, once the index has
 * applied the ingest stream up to the sequence the asker names: a document accepted a moment
 * before is found, not reported missing.
 */
export function documentLookupEndpoint(deps: { lexical: LexicalBackend; progress: IngestProgress }): Endpoint {
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
      const state = await deps.lexical.documentState({
        tenantId: lookup.tenantId,
        kbId: lookup.kbId,
        docId: lookup.docId,
      });
      return {
        data: codecs.documentState.encode({
          exists: state !== undefined && !state.deleted,
          version: state?.version ?? 0,
        }),
      };
    },
  };
}
