/**
 * Sets `key` as the newest entry of an insertion-ordered map, forgetting the oldest beyond
 * `max`: a bounded memory of what was seen last, in the order it was last seen.
 */
export function setNewest<K, V>(map: Map<K, V>, key: K, value: V, max: number): void {
  map.delete(key);
  map.set(key, value);
  if (map.size > max) map.delete(map.keys().next().value as K);
}
