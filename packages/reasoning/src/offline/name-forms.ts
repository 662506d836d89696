import { fold } from '@hopline/text';

/**
 * The other forms English writes one name in: a title of a document may name its entity by its
 * initials, without the rank a text put before it, or in another transliteration. Each form keeps
 * what identifies the name (every initial, every word but the ranks, all letters but one or two
 * of one word) so that two different entities do not pass for one. A name's last word alone is
 * no form of it: "Velmar" would be "Northern Velmar", "Tenbury, Velmar".
 */

// Words that only join the words of a name: they give no initial ("Bank of America" is BoA, BA).
const JOINING_WORDS = new Set(['of', 'the', 'and', 'for', 'de', 'du', 'la', 'von', 'van', '&']);
// Ranks and forms of address that a text puts before a name and a title leaves out.
const RANKS = new Set([
  'emperor',
  'empress',
  'king',
  'queen',
  'prince',
  'princess',
  'crown',
  'sir',
  'dame',
  'lord',
  'lady',
  'saint',
  'st',
  'pope',
  'president',
  'general',
  'duke',
  'duchess',
  'archduke',
  'archduchess',
  'count',
  'countess',
  'baron',
  'baroness',
  'sultan',
  'tsar',
  'czar',
  'dr',
  'mr',
  'mrs',
  'ms',
  'professor',
  'prof',
  'senator',
  'governor',
  'bishop',
  'cardinal',
  'reverend',
  'rev',
  'captain',
  'admiral',
  'marshal',
  'colonel',
]);
// Two spellings of one word differ by at most this many vowels ("Rajeev", "Rajiv").
const SPELLING_EDITS = 2;
const SPELLING_MIN_LENGTH = 4;

const words = (name: string): string[] => name.split(/\s+/).filter((word) => /[\p{L}\p{N}]/u.test(word));
const plain = (word: string): string => fold(word).replace(/[^\p{L}\p{N}]/gu, '');
const capitalised = (word: string): boolean => /^\p{Lu}/u.test(word.replace(/^[^\p{L}\p{N}]+/u, ''));

/** "HVT" of "Harbor Valley Telegraph": an upper-case word of the initials of the other's capitalised words. */
function isInitialism(short: string, long: string): boolean {
  const letters = short.replace(/\./g, '');
  if (!/^\p{Lu}{2,6}$/u.test(letters)) return false;
  const named = words(long).filter((word) => !JOINING_WORDS.has(plain(word)));
  if (named.length !== letters.length || !named.every(capitalised)) return false;
  return named.every((word, index) => plain(word)[0] === fold(letters[index] ?? ''));
}

/** "Orsolan" of "Emperor Orsolan": the name with the ranks before it left out. */
function withoutRanks(short: string[], long: string[]): boolean {
  const dropped = long.length - short.length;
  if (dropped < 1 || short.length === 0) return false;
  return (
    long.slice(0, dropped).every((word) => RANKS.has(plain(word))) &&
    short.every((word, index) => plain(word) === plain(long[dropped + index] ?? ''))
  );
}

// A word's consonants in order: transliterations of one name differ in its vowels ("Rajeev",
// "Rajiv"), where two names a letter apart differ in a consonant ("Haley", "Hadley").
const consonants = (word: string): string => word.replace(/[aeiouy]/g, '');

/**
 * "Katrin Velde" of "Katreen Velde": the same words but one, spelt a letter or two apart in its
 * vowels only, its first letter the same.
 */
function isOtherSpelling(a: string[], b: string[]): boolean {
  if (a.length < 2 || a.length !== b.length) return false;
  const differing = a.flatMap((word, index) => (plain(word) === plain(b[index] ?? '') ? [] : [index]));
  if (differing.length !== 1) return false;
  const index = differing[0] as number;
  const one = plain(a[index] ?? '');
  const other = plain(b[index] ?? '');
  return (
    /^\p{L}+$/u.test(one) &&
    /^\p{L}+$/u.test(other) &&
    Math.min(one.length, other.length) >= SPELLING_MIN_LENGTH &&
    one[0] === other[0] &&
    consonants(one) === consonants(other) &&
    editDistance(one, other) <= SPELLING_EDITS
  );
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i += 1) {
    const current = [i];
    for (let j = 1; j <= b.length; j += 1) {
      const substitution = (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1);
      current.push(Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, substitution));
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}

/** Whether two names are forms of one: initials, a rank left out, another spelling. */
export function isNameForm(title: string, entity: string): boolean {
  const a = words(title);
  const b = words(entity);
  if (a.length === 0 || b.length === 0) return false;
  return (
    isInitialism(title.trim(), entity) ||
    isInitialism(entity.trim(), title) ||
    withoutRanks(a, b) ||
    withoutRanks(b, a) ||
    isOtherSpelling(a, b)
  );
}
