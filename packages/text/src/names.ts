import { hasHan } from './chinese.js';
import { chineseNames } from './chinese-names.js';
import { ENGLISH_STOP_WORDS, singular } from './english.js';
import { memoizeByText } from './memo.js';
import { fold } from './normalize.js';
import { contentTerms } from './tokenizer.js';

/**
 * The names a text states, as the reasoner reads candidate bridge entities and the entity graph
 * links chunks: named spans (capitalised runs, quoted titles) and, in Chinese, which has no
 * capitals, the names the segmenter tags or a relation phrase states (chinese-names.ts). Each is
 * keyed by its content terms, so "The Saturdays" and "saturdays" are one entity wherever they
 * appear.
 */

// eslint-disable-next-line no-control-regex
const NON_ASCII = /[^\u0000-\u007f]/;

/**
 * A comparable key for an entity name: "The Saturdays" and "saturdays" share it. Remembered: the
 * offline reasoner keys the same few names of a question's chunks again at every step.
 */
export const entityKey: (name: string) => string = memoizeByText((name) => contentTerms(name).join(' '));

/** The content term of one token ('' for stop words and punctuation): contentTerms' first, cheaply. */
function termOf(word: string): string {
  if (!/^[\p{L}\p{N}]/u.test(word)) return '';
  const folded = fold(word);
  if (!NON_ASCII.test(folded)) {
    if (/^[a-z]+$/.test(folded)) return ENGLISH_STOP_WORDS.has(folded) ? '' : singular(folded);
    if (/^[0-9]+$/.test(folded)) return folded;
  }
  return contentTerms(word)[0] ?? '';
}

export interface Token {
  text: string;
  /** Character offsets of the token in the source text. */
  start: number;
  end: number;
  capitalised: boolean;
  numeric: boolean;
  /** The term this token contributes, or '' for stop words and punctuation. */
  term: string;
}

const TOKEN = /[\p{L}\p{N}][\p{L}\p{N}'’\-.&]*[\p{L}\p{N}]|[\p{L}\p{N}]|[.!?;:,()"“”«»《》「」]/gu;
// A full stop after these is an abbreviation, not the end of a sentence: "St. Louis", "J. R. Smith".
const ABBREVIATION =
  /^(?:\p{Lu}\.?)+$|^(?:St|Mt|Ft|Dr|Mr|Mrs|Ms|Jr|Sr|Gen|Col|Lt|Capt|Sgt|Rev|Prof|Co|Inc|Ltd|No|Vol)$/u;
const POSSESSIVE = /['’]s$/;

/**
 * The tokens names are read from: words and numbers with their offsets and capitalisation, the
 * punctuation that bounds a name, a possessive "'s" split off. Each word's term is its content
 * term, so names and terms agree on what a word says. Remembered per text: a hop reads the
 * names of the same chunks again.
 */
export const spanTokens = memoizeByText((text: string): readonly Token[] => {
  const tokens: Token[] = [];
  const push = (word: string, start: number) => {
    tokens.push({
      text: word,
      start,
      end: start + word.length,
      capitalised: /^\p{Lu}/u.test(word),
      numeric: /^\p{N}/u.test(word),
      term: termOf(word),
    });
  };
  for (const match of text.matchAll(TOKEN)) {
    const raw = match[0];
    const start = match.index;
    if (raw === '.' && ABBREVIATION.test(tokens.at(-1)?.text ?? '')) continue;
    const word = raw.length > 1 ? raw.replace(/\.$/, '') : raw;
    if (POSSESSIVE.test(word) && word.length > 3) {
      push(word.slice(0, -2), start);
      push(word.slice(-2), start + word.length - 2);
      continue;
    }
    push(word, start);
  }
  return Object.freeze(tokens);
});

export interface NamedSpan {
  text: string;
  start: number;
  end: number;
  /** Token index range [first, last) in `spanTokens(text)`, or -1 for spans found by quotes or in Chinese. */
  firstToken: number;
  lastToken: number;
  /** Read where the text states a relation to it ("负责人是李明"), not only from its form. */
  stated?: boolean;
}

// Lower-case words that may sit inside a name between capitalised words: "Bank of England".
const NAME_JOINERS: ReadonlySet<string> = new Set([
  'of',
  'the',
  'de',
  'von',
  'van',
  'der',
  'den',
  'la',
  'le',
  'du',
  'da',
  'di',
  'del',
  'y',
  '&',
  'al',
  'bin',
  'ibn',
  'el',
]);
// Capitalised only because they open a sentence: never the start of a name.
const SENTENCE_OPENERS: ReadonlySet<string> = new Set(
  (
    'the a an he she it his her its they their this that these those in on at after before when while during ' +
    'although however but and or for from by with as to of born was is one two some many most also later since ' +
    'until there here we i you our according around today despite following formed owned founded established ' +
    'located based born released published created built named'
  ).split(' '),
);
const QUOTED = /"([^"]{2,120})"|“([^”]{2,120})”|``([^`']{2,120})''|《([^》]{1,60})》|「([^」]{1,60})」/g;

/**
 * Proper-name spans: runs of capitalised words (joined by "of", "de", "&"…; numbers may
 * continue a run: "Game 6"), minus sentence openers, plus every quoted title and, in Chinese
 * text, the names the segmenter tags or a relation phrase states.
 */
export function namedSpans(
  text: string,
  tokens?: readonly Token[],
  options: { numbersOpenNames?: boolean } = {},
): readonly Readonly<NamedSpan>[] {
  // The reasoner reads the names of the same chunks and question again at every step: those
  // read from the text's own tokens are remembered.
  if (tokens !== undefined && tokens !== spanTokens(text)) return findNamedSpans(text, tokens, options);
  return options.numbersOpenNames === true ? questionSpans(text) : proseSpans(text);
}

const frozenSpans = (text: string, numbersOpenNames: boolean) =>
  Object.freeze(findNamedSpans(text, spanTokens(text), { numbersOpenNames }).map((span) => Object.freeze(span)));
const proseSpans = memoizeByText((text) => frozenSpans(text, false));
const questionSpans = memoizeByText((text) => frozenSpans(text, true));

function findNamedSpans(text: string, tokens: readonly Token[], options: { numbersOpenNames?: boolean }): NamedSpan[] {
  const spans: NamedSpan[] = [];
  let i = 0;
  while (i < tokens.length) {
    // A name starts with a capital. In a question a number may start one ("47 Lanterns");
    // in prose it is mostly a year before an adjective ("a 1947 Valdorian Western").
    const opensName =
      tokens[i]?.capitalised === true ||
      (options.numbersOpenNames === true && tokens[i]?.numeric === true && tokens[i + 1]?.capitalised === true);
    if (!opensName) {
      i += 1;
      continue;
    }
    let j = i + 1;
    while (j < tokens.length) {
      const token = tokens[j] as Token;
      if (token.capitalised || token.numeric) {
        j += 1;
        continue;
      }
      const next = tokens[j + 1];
      const afterNext = tokens[j + 2];
      const joins =
        NAME_JOINERS.has(token.text.toLowerCase()) &&
        (next?.capitalised === true ||
          (next !== undefined && NAME_JOINERS.has(next.text.toLowerCase()) && afterNext?.capitalised === true));
      if (!joins) break;
      j += 1;
    }
    // "Daniel Okafor of the Reliability department": a capitalised word after "of the" that a
    // lowercase noun follows modifies that noun; the name ends before the joiner.
    const after = tokens[j];
    if (after && /^\p{Ll}{3,}$/u.test(after.text) && !NAME_JOINERS.has(after.text)) {
      const article = tokens.findIndex(
        (token, index) => index > i && index < j && token.text.toLowerCase() === 'the' && index > 0,
      );
      if (article > i + 1 && NAME_JOINERS.has((tokens[article - 1] as Token).text.toLowerCase())) j = article - 1;
    }
    let first = i;
    // "The", "In", "He" open sentences; mid-sentence ("We Sweat Blood") they belong to the name.
    const atSentenceStart = i === 0 || /^[.!?;:"“(]$/.test((tokens[i - 1] as Token).text);
    while (
      first < j &&
      (atSentenceStart || first > i) &&
      SENTENCE_OPENERS.has((tokens[first] as Token).text.toLowerCase())
    )
      first += 1;
    let last = j;
    while (last > first && NAME_JOINERS.has((tokens[last - 1] as Token).text.toLowerCase())) last -= 1;
    if (first < last) {
      const start = (tokens[first] as Token).start;
      const end = (tokens[last - 1] as Token).end;
      spans.push({ text: text.slice(start, end), start, end, firstToken: first, lastToken: last });
    }
    i = Math.max(j, i + 1);
  }
  for (const match of text.matchAll(QUOTED)) {
    const inner = match.slice(1).find((group) => group !== undefined);
    if (!inner?.trim()) continue;
    const start = match.index + match[0].indexOf(inner);
    spans.push({ text: inner.trim(), start, end: start + inner.length, firstToken: -1, lastToken: -1 });
  }
  if (hasHan(text)) {
    for (const name of chineseNames(text))
      spans.push({
        text: name.text,
        start: name.start,
        end: name.end,
        firstToken: -1,
        lastToken: -1,
        stated: name.stated,
      });
  }
  return spans;
}

/**
 * The entity keys a chunk names, for the entity–chunk graph retrieval keeps beside its indexes:
 * its document's title, its named spans, keyed as the reasoner compares names. The reasoner and
 * the graph thus agree on what a name is, and a hop's seeds find the chunks that name them.
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
