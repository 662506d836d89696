import type { Chunk__Output } from '@hopline/contracts';
import { contentTerms, lightStem } from '@hopline/text';
import { expandRelations, isRoleNoun } from './relations.js';
import { sentences, states } from './text.js';

/**
 * The final hop's support check: a chain's answer stands only where the sentence that states it
 * also states what the question asks of it. A chain whose sought document is missing still reads
 * some name, date or number off the chunks that are left; what tells such an answer apart is that
 * its sentence says something else of it ("an English chef best known for the Michelin star
 * restaurant" answers no "sister named what").
 */

// "Who is the maternal grandfather of X", "What was the wife of X": the role the question word asks for.
const ROLE_ASKED_AFTER =
  /^\s*(?:who|whom|what)\s+(?:is|was|are|were)\s+(?:the\s+|a\s+|an\s+)?(?:[\p{L}-]+\s+)?([\p{L}-]+)\s+(?:of|to|for)\b/iu;
// "has a sister named what", "a son called what": the role the answer is the name of.
const ROLE_ASKED_BEFORE = /\b([\p{L}-]+)\s+(?:named|called)\s+(?:what|who)\b/iu;

/**
 * The role noun a question asks the holder of ("sister", "grandfather"), if the question word
 * asks for one: the answer is another entity, and a text names a role-holder beside the role
 * ("his sister Sophy", "the son of Olof"). A question that only mentions a role on the way
 * ("the director of X was born where?") asks something else of its holder.
 */
export function askedRole(question: string): string | undefined {
  for (const pattern of [ROLE_ASKED_AFTER, ROLE_ASKED_BEFORE]) {
    const noun = contentTerms(pattern.exec(question)?.[1] ?? '')[0];
    if (noun && isRoleNoun(noun)) return noun;
  }
  return undefined;
}

/** The sentences of a chunk that state an answer, as one text; the whole chunk where none does by itself. */
export function answerSentences(chunk: Pick<Chunk__Output, 'text'>, answer: string): string {
  const stating = sentences(chunk.text).filter((sentence) => states(sentence.text, answer));
  return stating.length > 0 ? stating.map((sentence) => sentence.text).join(' ') : chunk.text;
}

/**
 * Whether a text says one of the relation words, in the words evidence uses for it: a word of
 * the text is the relation word or a longer form of it ("starring" for "star"), never a shorter
 * word it begins with (the "Grand" of "Grand Prince" says no "grandfather").
 */
export function statesAnyRelation(text: string, relation: readonly string[]): boolean {
  const said = contentTerms(text);
  return expandRelations(relation).some((term) =>
    said.some(
      (word) => word === term || lightStem(word) === lightStem(term) || (term.length >= 4 && word.startsWith(term)),
    ),
  );
}
