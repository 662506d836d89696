let lastVersion = 0;

/**
 * The version of a document write that names none: the current time in milliseconds, but above
 * every version this process handed out before. The write's message id names its version, so
 * two writes of one document stamped in the same millisecond (twice in one request, or an
 * upsert and a delete in quick turn) would otherwise be one message to JetStream, which drops
 * the second as a duplicate.
 */
export function versionNow(): number {
  lastVersion = Math.max(Date.now(), lastVersion + 1);
  return lastVersion;
}
