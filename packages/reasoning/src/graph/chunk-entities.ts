import { entityKey, namedSpans } from '../offline/text.js';

/**
 * The entity keys a chunk names, for the entity–chunk graph retrieval keeps beside its indexes
 * (`@hopline/retrieval`, graph/): its document's title, its capitalised and quoted names, and
 * in Chinese the names jieba tags, each read as the offline reasoner reads names, keyed as it
 * compares them ("The Saturdays" and "saturdays" share a key). The reasoner and the graph thus
 * agree on what a name is, and a hop's seeds find the chunks that name them.
 */
export function chunkEntities(title: string, text: string): string[] {
  const keys = new Set<string>();
  const titleKey = entityKey(title);
  if (titleKey) keys.add(titleKey);
  for (const span of namedSpans(text)) {
    const key = entityKey(span.text);
    if (key) keys.add(key);
  }
  return [...keys];
}
