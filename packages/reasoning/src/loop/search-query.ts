import { questionAnchors } from '../offline/question.js';

// How many times a named entity counts in a first-hop search: the names a question gives are
// its most selective words, and BM25 weighs a query term by how often the query repeats it.
const ENTITY_WEIGHT = 3;

/**
 * The search a chain's first hop sends for a (sub-)question: its words, with the entities it
 * names weighted up so that generic words ("population", "city") cannot outvote them. Later
 * hops search with the reasoner's next query as it is.
 */
export function firstHopSearch(question: string): string {
  const anchors = questionAnchors(question);
  if (anchors.length === 0) return question;
  return [question, ...Array.from({ length: ENTITY_WEIGHT - 1 }, () => anchors.join(' '))].join(' ');
}
