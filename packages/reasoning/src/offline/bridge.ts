import type { Chunk__Output } from '@hopline/contracts';
import { containsStem, entityKey, hasHan, namedSpans, spanTokens } from '@hopline/text';
import { isNameForm } from './name-forms.js';
import { expandRelations } from './relations.js';
import type { TitleConventions } from './text.js';
import { bareTitle } from './text.js';

/**
 * Bridge entities: the names in a hop's cited evidence that the next hop should look up. A name
 * scores by where it stands (next to the words of the relation the question asks about, early
 * in the text) and by whether the knowledge base has a document titled with it.
 */

export interface BridgeCandidate {
  name: string;
  score: number;
  /** The chunk the name was read from. */
  chunkId: string;
}

export interface CandidateOptions {
  /** The question's relation words, to score names by proximity to. */
  relationTerms: readonly string[];
  /** Names the chain already knows (anchors, earlier answers): never a new bridge. */
  known: readonly string[];
  /** Titles of every chunk this hop retrieved: a name that is a title is a real entity. */
  retrievedTitles: readonly string[];
  /**
   * How much the chunk is about what the hop was looking for: 1 for the document about it, less
   * for one about a weaker lead, 0 for any other chunk (which counts by its rank instead).
   */
  anchorWeight: (chunk: Chunk__Output) => number;
  /**
   * Reading the final answer rather than a bridge: the document's own title then counts for less
   * than a name next to the relation words ("the son of Tobias Wrenfield and his wife…").
   */
  concluding?: boolean;
  /** How titles name what their documents are about. */
  titles: TitleConventions;
}

const DATE_LIKE =
  /\b(January|February|March|April|May|June|July|August|September|October|November|December)\b|^\p{N}+$/u;
const TRAILING_NUMBERS = /(?:\s+[\p{N}][\p{N}\p{Pd}.,:/]*)+$/u;
const PROXIMITY_SCALE = 4;
const FOLLOWS_RELATION = 1.3;
const TITLE_OF_RETRIEVED_BONUS = 0.5;
const EARLY_MENTION_WEIGHT = 0.3;
const OWN_TITLE_SCORE = 0.8;
const OWN_TITLE_SCORE_CONCLUDING = 0.5;
const NAMED_TITLE_SCORE = 1;
export const UNANCHORED_WEIGHT = 0.4;
// Chinese has no spaces: distances are counted in characters, about two to a word.
const HAN_CHARS_PER_TOKEN = 2;
// A name the text states in a relation phrase ("负责人是李明") rather than only by its form.
const STATED_BONUS = 0.5;

const containsWords = (outer: string, inner: string) => ` ${outer} `.includes(` ${inner} `);

/**
 * Whether `short` is `full` with inner words left out: the same first and last word, the rest in
 * order ("Orla Brennick" of "Orla Maud Brennick", a name without its middle name).
 */
function isShortForm(short: string, full: string): boolean {
  const shortWords = short.split(' ');
  const fullWords = full.split(' ');
  if (shortWords.length < 2 || shortWords.length >= fullWords.length) return false;
  if (shortWords[0] !== fullWords[0] || shortWords.at(-1) !== fullWords.at(-1)) return false;
  let at = 0;
  for (const word of fullWords) if (word === shortWords[at]) at += 1;
  return at >= shortWords.length;
}

/**
 * A name the chain already has, a part of one ("Bibring"), a longer form of one ("Sir X Y"), or
 * one without its middle name: the question's own entity under the title its document carries is
 * no bridge to another.
 */
function isKnown(name: string, known: readonly string[]): boolean {
  const key = entityKey(name);
  if (!key) return true;
  return known.some((entity) => {
    const knownKey = entityKey(entity);
    return (
      knownKey !== '' && (containsWords(knownKey, key) || containsWords(key, knownKey) || isShortForm(key, knownKey))
    );
  });
}

/** Candidates from the cited chunks, best first, one entry per distinct name. */
export function bridgeCandidates(cited: readonly Chunk__Output[], options: CandidateOptions): BridgeCandidate[] {
  const relation = expandRelations(options.relationTerms);
  const titleKeys = new Set(options.retrievedTitles.map((title) => entityKey(bareTitle(title, options.titles))));
  const best = new Map<string, BridgeCandidate>();
  const offer = (name: string, score: number, chunkId: string) => {
    const key = entityKey(name);
    const current = best.get(key);
    if (!current || current.score < score) best.set(key, { name, score, chunkId });
  };

  cited.forEach((chunk, rank) => {
    const weight = options.anchorWeight(chunk) || UNANCHORED_WEIGHT / (1 + rank * 0.5);
    const ownTitle = bareTitle(chunk.title, options.titles);
    const ownKey = entityKey(ownTitle);
    const ownTitleScore = options.concluding ? OWN_TITLE_SCORE_CONCLUDING : OWN_TITLE_SCORE;
    if (!isKnown(ownTitle, options.known)) offer(ownTitle, ownTitleScore * weight, chunk.chunkId);

    const tokens = spanTokens(chunk.text);
    const relationPositions: number[] = [];
    tokens.forEach((token, index) => {
      if (token.term && containsStem(relation, token.term)) relationPositions.push(index);
    });
    const hanRelations = hasHan(chunk.text) ? hanRelationSpans(chunk.text, relation) : [];
    const spans = namedSpans(chunk.text, tokens);
    const aliases = subjectAliases(chunk.text, ownKey);
    const spanKeys = new Set(spans.map((span) => entityKey(span.text)));
    for (const span of spans) {
      const key = entityKey(span.text);
      if (key === ownKey || DATE_LIKE.test(span.text) || isKnown(span.text, options.known)) continue;
      if (!options.concluding && (modifiesNoun(chunk.text, span) || within(span, aliases) || isInitial(span.text)))
        continue;
      // "Granite Falcons 3–1": a score after a name known alone (in this text, or as a title) is not part of it.
      const withoutNumbers = entityKey(span.text.replace(TRAILING_NUMBERS, ''));
      if (withoutNumbers !== key && (spanKeys.has(withoutNumbers) || titleKeys.has(withoutNumbers))) continue;
      let proximity = 0;
      if (span.firstToken >= 0) {
        for (const position of relationPositions) {
          const gap =
            position < span.firstToken
              ? span.firstToken - position
              : position >= span.lastToken
                ? position - span.lastToken + 1
                : 0;
          // English names the role-holder after the relation: "directed by X", "the son of X".
          const after = position < span.firstToken ? FOLLOWS_RELATION : 1;
          proximity = Math.max(proximity, after / (1 + gap / PROXIMITY_SCALE));
        }
      }
      for (const relationSpan of hanRelations) {
        const before = relationSpan.end <= span.start;
        const gap = before
          ? span.start - relationSpan.end
          : relationSpan.start >= span.end
            ? relationSpan.start - span.end
            : 0;
        // "负责人是李明" names the holder after the relation, as English does.
        proximity = Math.max(
          proximity,
          (before ? FOLLOWS_RELATION : 1) / (1 + gap / HAN_CHARS_PER_TOKEN / PROXIMITY_SCALE),
        );
      }
      const titled = titleKeys.has(key) ? TITLE_OF_RETRIEVED_BONUS : 0;
      const early = EARLY_MENTION_WEIGHT / (1 + span.start / 150);
      const stated = span.stated ? STATED_BONUS : 0;
      offer(span.text, (proximity + titled + early + stated) * weight, chunk.chunkId);
    }
    // A retrieved document's title written in this chunk is a link the text itself makes.
    const lowerText = chunk.text.toLowerCase();
    for (const title of options.retrievedTitles) {
      const name = bareTitle(title, options.titles);
      const long = hasHan(name) ? name.length >= 2 : name.length > 3;
      if (
        long &&
        entityKey(name) !== ownKey &&
        lowerText.includes(name.toLowerCase()) &&
        !isKnown(name, options.known)
      ) {
        // Read for the answer, such a link is no sign of one: the title bonus a name read there
        // already has is all it gets, so a name beside the relation ("won by X") stays ahead.
        offer(name, (options.concluding ? TITLE_OF_RETRIEVED_BONUS : NAMED_TITLE_SCORE) * weight, chunk.chunkId);
      }
    }
  });
  return [...best.values()].sort((a, b) => b.score - a.score);
}

// An indefinite article, then any lower-case or numeric modifiers (no preposition or conjunction,
// which would end the phrase: "an opera by X"): the opening of a noun phrase.
const INDEFINITE_OPENING =
  /\b(?:a|an)\s+(?:(?!(?:by|of|in|on|at|to|for|from|with|and|or|as)\s)[\p{Ll}\p{N}][\p{L}\p{N}-]*\s+){0,3}$/u;
const LOWER_CASE_WORD_NEXT = /^\s+\p{Ll}/u;

/**
 * Whether a name stands as a modifier inside an indefinite noun phrase ("a Valdorian classical
 * harpist", "a 1980 Hong Kong horror film"): the phrase describes the text's subject, and the name
 * in it (a nationality, a place, a style) refers to no entity that a next hop could look up. An
 * indefinite article never opens a reference to one named thing; a name it opens ends before the
 * noun it qualifies.
 */
function modifiesNoun(text: string, span: { start: number; end: number }): boolean {
  return (
    INDEFINITE_OPENING.test(text.slice(Math.max(0, span.start - 60), span.start)) &&
    LOWER_CASE_WORD_NEXT.test(text.slice(span.end))
  );
}

/**
 * The parenthesis right after a text's opening name, when that name is its own subject and the
 * parenthesis holds nothing but names and numbers ("Chaconne in F minor (PWC 43, T. 206) is…"):
 * other names and catalogue numbers of the subject itself, no other entity to look up. One that
 * says something ("(born 1955 in Toronto)") is not a list of names.
 */
function subjectAliases(text: string, ownKey: string): { start: number; end: number } | undefined {
  const open = text.indexOf('(');
  const close = text.indexOf(')', open);
  if (open <= 0 || close < 0 || ownKey === '' || entityKey(text.slice(0, open)) !== ownKey) return undefined;
  return /\b\p{Ll}/u.test(text.slice(open + 1, close)) ? undefined : { start: open, end: close };
}

// A lone capital ("D" of "D minor", an initial) names nothing a next hop could look up.
const isInitial = (name: string) => /^\p{Lu}\.?$/u.test(name.trim());

const within = (span: { start: number; end: number }, range: { start: number; end: number } | undefined) =>
  range !== undefined && span.start > range.start && span.end <= range.end;

/** Where the Chinese relation words occur in a text, as character ranges. */
function hanRelationSpans(text: string, relation: readonly string[]): { start: number; end: number }[] {
  const found: { start: number; end: number }[] = [];
  for (const term of relation) {
    if (!hasHan(term)) continue;
    for (let at = text.indexOf(term); at >= 0; at = text.indexOf(term, at + term.length))
      found.push({ start: at, end: at + term.length });
  }
  return found;
}

/**
 * Whether a chunk is the document about `entity`: its title names it exactly, bare of its
 * parenthesis, or before the comma that disambiguates it ("Elm Park, Dunmore" is about Elm
 * Park), or in another form of the name ("HVT" is about the Harbor Valley Telegraph).
 */
export function isAbout(chunk: Chunk__Output, entity: string, titles: TitleConventions): boolean {
  const key = entityKey(entity);
  if (key.length === 0) return false;
  const bare = bareTitle(chunk.title, titles);
  return (
    entityKey(chunk.title) === key ||
    entityKey(bare) === key ||
    (titles.comma && entityKey(bare.split(/,\s+/)[0] ?? '') === key) ||
    (titles.nameForms && bare !== '' && isNameForm(bare, entity))
  );
}
