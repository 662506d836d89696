import { setNewest } from '../newest-first.js';

/**
 * Documents whose last stamp is remembered. Only a document stamped twice within one
 * millisecond needs its stamp raised, so the memory needs to reach back a millisecond, not
 * further: far more documents than any process ingests in one.
 */
const REMEMBERED_DOCUMENTS = 65_536;

const lastVersions = new Map<string, number>();

/**
 * The version of a document write that names none: the current time in milliseconds, but above
 * the version this process last gave the same document. The write's message id names its
 * version, so two writes of one document stamped in the same millisecond (twice in one request,
 * or an upsert and a delete in quick turn) would otherwise be one message to JetStream, which
 * drops the second as a duplicate. Per document, not per process: a process-wide stamp ran ahead
 * of the clock whenever documents came faster than one a millisecond (one upload of 100,000 put
 * it over a minute ahead), and a later write of one of them from another replica, or after a
 * restart, then stamped lower and was dropped as stale after its 202.
 */
export function versionNow(tenantId: string, kbId: string, docId: string): number {
  const key = `${tenantId}\u0000${kbId}\u0000${docId}`;
  const last = lastVersions.get(key);
  const version = last === undefined ? Date.now() : Math.max(Date.now(), last + 1);
  setNewest(lastVersions, key, version, REMEMBERED_DOCUMENTS);
  return version;
}
