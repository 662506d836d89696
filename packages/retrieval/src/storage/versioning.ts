import type { DocumentState, WriteOutcome } from '../backends/types.js';

/**
 * The version rules every backend applies, so that at-least-once delivery in any order ends in
 * the same state: a newer version wins, the same version again changes nothing, and a delete
 * at version v removes every version up to v and keeps older upserts from coming back.
 */
export function decideUpsert(current: DocumentState | undefined, version: number): WriteOutcome {
  if (!current) return 'applied';
  if (current.version > version) return 'stale';
  if (current.version === version) return current.deleted ? 'stale' : 'unchanged';
  return 'applied';
}

export function decideDelete(current: DocumentState | undefined, version: number): WriteOutcome {
  if (!current) return 'applied';
  if (current.deleted) return current.version >= version ? 'unchanged' : 'applied';
  return current.version > version ? 'stale' : 'applied';
}
