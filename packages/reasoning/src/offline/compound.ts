/**
 * A compound question: two questions joined by "and", the second asking about the first one's
 * answer through a pronoun ("Who owns Project Beacon and which department is that person in?",
 * "Who coaches the Otters and when did he start?"). Both parts are asked, and the answer gives
 * both. English only.
 */
export interface CompoundQuestion {
  /** The first question, on its own. */
  first: string;
  /** The second, its back-reference replaced by `placeholder`. */
  second: string;
}

// "… and which …", "…, and when …": the second part opens with a question word.
const JOINED = /^(.+?\S)\s*,?\s+and\s+((?:which|what|when|where|who|whom|whose|how)\b.+)$/i;
const MIN_PART_WORDS = 3;
// A first part that asks who or what a description is: "Who is the coach of the Lakeside Otters".
const DESCRIBED = /^\s*(?:who|what)\s+(?:is|was|are|were)\s+(the\s+.+)$/i;
// A question on its own opens with a question word or an auxiliary.
const OPENS_QUESTION = /^\s*(?:which|what|when|where|who|whom|whose|how|is|are|was|were|do|does|did|has|have|had)\b/i;
// What refers back to the first part's answer: a personal pronoun, or "that"/"this" and one noun.
const BACK_REFERENCE = /\b(?:he|she|it|they|him|her|them|(?:that|this)\s+\p{Ll}+)\b/u;

export function compoundParts(question: string, placeholder: string): CompoundQuestion | undefined {
  const joined = JOINED.exec(question.trim());
  if (!joined) return undefined;
  const [, first = '', rest = ''] = joined;
  // "Which year and which league was …" asks two things of one predicate: a part that is a
  // question of its own says something after its question word.
  if (!OPENS_QUESTION.test(first) || first.trim().split(/\s+/).length < MIN_PART_WORDS) return undefined;
  const reference = BACK_REFERENCE.exec(rest);
  if (!reference) return undefined;
  // "Who is the coach of X and when did he start?": he started as the coach of X, which the
  // second part keeps beside the answer it refers to.
  const description = DESCRIBED.exec(first)?.[1]?.replace(/[\s?？,;:]+$/, '');
  const referent = description ? `${placeholder}, ${description},` : placeholder;
  const second =
    `${rest.slice(0, reference.index)}${referent}${rest.slice(reference.index + reference[0].length)}`.replace(
      /,\s*([?？])$/,
      '$1',
    );
  return { first: `${first.replace(/[\s,;:]+$/, '')}?`, second: /[?？]\s*$/.test(second) ? second : `${second}?` };
}
