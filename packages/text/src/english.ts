/**
 * English term normalisation: a stop-word list and a light stemmer. "Light" on purpose: it
 * folds inflections (plural, -ing, -ed, possessive) that make a question miss its paragraph,
 * and leaves derivations alone (Porter's "university" → "univers" merges too much).
 */

// Retrieval and reasoning read with this one list. Words only reasoning used to drop ("yes",
// "since", "might", "shall"…) stay in the index: they are in titles ("Yes", "We Shall Overcome").
// A lone "s" is what a possessive or an initial leaves.
export const ENGLISH_STOP_WORDS: ReadonlySet<string> = new Set(
  (
    'a about above after again against all am an and any are as at be because been before being below ' +
    'between both but by can could did do does doing down during each few for from further had has have ' +
    'having he her here hers herself him himself his how i if in into is it its itself just me more most my ' +
    'myself no nor not now of off on once only or other our ours ourselves out over own same she should so ' +
    'some such than that the their theirs them themselves then there these they this those through to too ' +
    'under until up very was we were what when where which while who whom why will with would you your ' +
    'yours yourself yourselves also whose s'
  ).split(' '),
);

const VOWEL = /[aeiouy]/;

function hasVowel(stem: string): boolean {
  return VOWEL.test(stem);
}

function undouble(stem: string): string {
  const last = stem.charCodeAt(stem.length - 1);
  if (stem.length > 2 && last === stem.charCodeAt(stem.length - 2) && !'lsz'.includes(stem[stem.length - 1] ?? '')) {
    return stem.slice(0, -1);
  }
  return stem;
}

/**
 * The light stemmer's first step: a lower-case plural folded to its singular ("cities" → "city",
 * "churches" → "church", "players" → "player"; "bus", "class" and "tennis" stay). Reasoning stops
 * here, since its terms are read back as words (queries, sub-questions); the index goes on.
 */
export function singular(word: string): string {
  if (word.length <= 3 || !word.endsWith('s')) return word;
  if (word.endsWith('ies') && word.length > 4) return word.slice(0, -3) + 'y';
  if (word.endsWith('sses')) return word.slice(0, -2);
  if (/(?:ches|shes|xes|zzes)$/.test(word)) return word.slice(0, -2);
  if (word.endsWith('s') && !/(?:ss|us|is|'s)$/.test(word)) return word.slice(0, -1);
  return word;
}

/**
 * Stems one lower-case alphabetic word. A final silent "e" is dropped after suffix removal so
 * that "create", "creates" and "created" share "creat".
 */
function stemOf(word: string): string {
  let stem = singular(word);
  if (stem.endsWith('ing') && stem.length > 5 && hasVowel(stem.slice(0, -3))) stem = undouble(stem.slice(0, -3));
  else if (stem.endsWith('ed') && stem.length > 4 && hasVowel(stem.slice(0, -2))) {
    stem = stem.endsWith('ied') ? stem.slice(0, -3) + 'y' : undouble(stem.slice(0, -2));
  }
  if (stem.length > 4 && stem.endsWith('e') && !stem.endsWith('ee')) stem = stem.slice(0, -1);
  return stem;
}

// The index stems the same frequent words again and again, and reasoning compares the stems of
// the same few words many times a question: stems are remembered, dropped whole past the bound.
const stems = new Map<string, string>();
const MAX_STEMS = 200_000;

/** The light stem of one lower-case alphabetic word (`stemOf`), remembered. */
export function lightStem(word: string): string {
  if (word.length <= 3) return word;
  let stem = stems.get(word);
  if (stem === undefined) {
    if (stems.size >= MAX_STEMS) stems.clear();
    stem = stemOf(word);
    stems.set(word, stem);
  }
  return stem;
}

/** Whether two words share a long prefix: one a prefix of the other (at least four letters), or most of the shorter. */
function sharePrefix(a: string, b: string): boolean {
  const shorter = Math.min(a.length, b.length);
  if (shorter < 4) return false;
  let common = 0;
  while (common < shorter && a.charCodeAt(common) === b.charCodeAt(common)) common += 1;
  return common === shorter || (common >= 5 && common >= 0.7 * shorter);
}

/**
 * Whether two terms are forms of one word: equal, one a prefix of the other (at least four
 * letters: "star"/"starring"), or sharing a long common prefix ("directed"/"director"). Reasoning
 * compares its unstemmed terms with it, where the index compares stems.
 */
export function sameStem(a: string, b: string): boolean {
  // "owns" and "owned" share a stem too short for the prefix test.
  return a === b || lightStem(a) === lightStem(b) || sharePrefix(a, b);
}

/** Whether any of `terms` is a form of `term` (`sameStem`), the term stemmed once. */
export function containsStem(terms: readonly string[], term: string): boolean {
  const stem = lightStem(term);
  return terms.some((candidate) => candidate === term || lightStem(candidate) === stem || sharePrefix(candidate, term));
}
