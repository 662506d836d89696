import type { Chunk__Output } from '@hopline/contracts';
import { contentTerms, lightStem } from '@hopline/text';
import { expandRelations, isRoleNoun } from './relations.js';
import { sentences, states } from './text.js';

/**
 * The final hop's role-holder check: a chain's answer to a question for the holder of a role
 * stands only where a sentence that states the answer also names the role. A chain whose sought
 * document is missing still reads some name off the chunks that are left; what tells such an
 * answer apart is that its sentences say something else of it ("a Danish baker best known for
 * the rye bread bakery" answers no "brother named what").
 */

// "Who is the paternal grandmother of X", "What was the husband of X": the role the question word asks for.
const ROLE_ASKED_AFTER =
  /^\s*(?:who|whom|what)\s+(?:is|was|are|were)\s+(?:the\s+|a\s+|an\s+)?(?:[\p{L}-]+\s+)?([\p{L}-]+)\s+(?:of|to|for)\b/iu;
// "has a brother named what", "a daughter called what": the role the answer is the name of.
const ROLE_ASKED_BEFORE = /\b([\p{L}-]+)\s+(?:named|called)\s+(?:what|who)\b/iu;

/**
 * The role noun a question asks the holder of ("sister", "grandfather"), if the question word
 * asks for one: the answer is another entity, and a text names a role-holder beside the role
 * ("his sister Marta", "the son of Olof"). A question that only mentions a role on the way
 * ("the director of X was born where?") asks something else of its holder.
 */
export function roleAskedFor(question: string): string | undefined {
  for (const pattern of [ROLE_ASKED_AFTER, ROLE_ASKED_BEFORE]) {
    const noun = contentTerms(pattern.exec(question)?.[1] ?? '')[0];
    if (noun && isRoleNoun(noun)) return noun;
  }
  return undefined;
}

/**
 * Whether the chunks an answer was read from name a role beside it: a sentence that states the
 * answer also states the role (a chunk that states it only across sentences is read whole).
 */
export function namesRoleBeside(chunks: readonly Pick<Chunk__Output, 'text'>[], answer: string, role: string): boolean {
  return chunks
    .filter((chunk) => states(chunk.text, answer))
    .some((chunk) => {
      const stating = sentences(chunk.text).filter((sentence) => states(sentence.text, answer));
      const text = stating.length > 0 ? stating.map((sentence) => sentence.text).join(' ') : chunk.text;
      return statesAnyRelation(text, [role]);
    });
}

/**
 * Whether a text says one of the relation words, in the words evidence uses for it: a word of
 * the text is the relation word or a longer form of it ("starring" for "star"), never a shorter
 * word it begins with (the "Grand" of "Grand Marshal" says no "grandfather").
 */
export function statesAnyRelation(text: string, relation: readonly string[]): boolean {
  const said = contentTerms(text);
  return expandRelations(relation).some((term) =>
    said.some(
      (word) => word === term || lightStem(word) === lightStem(term) || (term.length >= 4 && word.startsWith(term)),
    ),
  );
}
