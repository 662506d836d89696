/**
 * The most characters (code points, as the gateway counts a question's) of a retrieve request's
 * query. A worker tokenizes and scores the query on its event loop, where no deadline can cut
 * it short, so one query as large as a bus message would stall every other question on that
 * worker. Hopline's own queries are far shorter: the question (the gateway's MAX_QUESTION_CHARS
 * is held under this), a planned sub-question, or a next query made of a bridge answer and the
 * question's words; the reasoner clips a model-written one to this.
 */
export const RETRIEVE_QUERY_MAX_CHARS = 8_000;

/**
 * The most seeds a retrieve request carries, each held to RETRIEVE_QUERY_MAX_CHARS: the worker
 * reads names out of every one on its event loop. Hopline sends the hop's query, its bridge and
 * one answer per earlier hop: at most seven under the hop cap of five.
 */
export const RETRIEVE_MAX_SEEDS = 16;

/**
 * The most characters of a retrieve request's HyDE text a worker embeds. Beyond it the text is
 * cut, not refused: it is the model's guess at an answer, an aid to the vector path only, and
 * an embedding model reads no more than its context window of it anyway, so failing the
 * question for a verbose guess would cost the user an answer for nothing.
 */
export const RETRIEVE_HYDE_MAX_CHARS = 4_000;

/** `text` cut to at most `maxChars` code units, never between the two halves of a surrogate pair. */
export function clipToChars(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  const end = /[\uD800-\uDBFF]/.test(text.charAt(maxChars - 1)) ? maxChars - 1 : maxChars;
  return text.slice(0, end);
}

/**
 * Whether `text` has more than `maxChars` characters, counted as code points (an emoji is one)
 * as the gateway counts a question's: a question at the gateway's bound, sent on as a query,
 * is within this one whatever its script.
 */
export function longerThanChars(text: string, maxChars: number): boolean {
  // Code units bound the count both ways: no more characters than units, no fewer than half.
  if (text.length <= maxChars) return false;
  if (text.length > 2 * maxChars) return true;
  let characters = 0;
  for (const _ of text) if (++characters > maxChars) return true;
  return false;
}
