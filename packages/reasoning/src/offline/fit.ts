import type { Chunk__Output } from '@hopline/contracts';
import { containsStem, contentTerms, ENGLISH_STOP_WORDS } from '@hopline/text';
import { datesIn, namesScore } from './answers.js';
import { namesNumber } from './claims.js';
import { answerType, comparesTimesOfSeveral } from './question.js';
import { escapeRegExp, states } from './text.js';

/**
 * Whether a chain's answer is of the kind its question asks for, read from the question's shape
 * and the way the evidence uses the answer. A chain that reached some entity is not thereby
 * answered: a hop that stopped on a confident bridge hands over a name where a date was asked, a
 * bridge followed to a neighbour hands over a word of the neighbour's description. Where the
 * answer does not fit, the question is not answered: what is missing is a document that states
 * what is asked.
 */

// "Was X or Y founded first?", "born first out of X and Y": the things compared are offered to choose from.
const OFFERS_OPTIONS = /\b(?:or|out of|between)\b/i;
// "what nationality", "what kind of film": a word that describes something is what is asked.
const ASKS_DESCRIPTION =
  /\b(?:nationality|nationalities|citizenship|lineage|ethnicity|descent|origin|heritage|type|kind|sort|genre|style|language|focus)\b/i;
// A determiner or a count, and up to two lower-case words after it ("an award-winning", "a 2008").
const DETERMINER =
  /(?:^|[\s(])(?:[Aa]n?|[Tt]he|\p{N}+|two|three|four|five|six|seven|eight|nine|ten)(?:\s+[\p{Ll}\p{N}][\p{L}\p{N}'’-]*){0,2}\s+$/u;
const NEXT_WORD = /^\s+(\p{Ll}[\p{L}'’-]*)/u;

/**
 * Whether a text uses a name as an attribute of a noun after it: between a determiner (or a
 * count) and a common noun, as "a Valdorian drama film" or "the Lanternfall era" do. A
 * word in -ed or -s after it ("the Wrenfields recorded", "the City of Dunmore operates") is likelier
 * a verb, and makes it the subject of a clause instead. A noun of the kind asked is named by it,
 * not described: "the Platform Engineering department" answers "which department".
 */
function attributiveAt(text: string, start: number, end: number, askedKind: readonly string[]): boolean {
  const next = NEXT_WORD.exec(text.slice(end))?.[1]?.toLowerCase();
  if (!next || ENGLISH_STOP_WORDS.has(next) || /(?:ed|s)$/.test(next)) return false;
  if (contentTerms(next).some((term) => containsStem(askedKind, term))) return false;
  return DETERMINER.test(text.slice(0, start));
}

/**
 * Whether every mention of a name in the chunks is an attribute of another noun ("a Bavarian
 * born painter", "the two-star Ferrand guide restaurant"), other than of the kind asked: a word that
 * describes something, not the person, place or thing a question asks for unless it asks for a
 * description. False where no chunk mentions it.
 */
function onlyAttributive(
  name: string,
  chunks: readonly Pick<Chunk__Output, 'text'>[],
  askedKind: readonly string[],
): boolean {
  const pattern = new RegExp(`(?<![\\p{L}\\p{N}])${escapeRegExp(name)}(?![\\p{L}\\p{N}])`, 'gu');
  const mentions = chunks.flatMap((chunk) =>
    [...chunk.text.matchAll(pattern)].map((match) => ({
      text: chunk.text,
      start: match.index,
      end: match.index + match[0].length,
    })),
  );
  return mentions.length > 0 && mentions.every(({ text, start, end }) => attributiveAt(text, start, end, askedKind));
}

// "in what city", "what Velmar county", "which 1702-1706 wars": the words after the question
// word name the kind of thing asked.
const ASKED_PHRASE = /\b(?:what|which)((?:\s+[\p{L}\p{N}\p{Pd}'’]+){1,3})/iu;

/** The content terms of the words that name the kind of thing a question asks for; [] without them. */
function askedKind(question: string): readonly string[] {
  const phrase = ASKED_PHRASE.exec(question)?.[1]?.trim() ?? '';
  // "called what after 1994": no noun after the question word, nothing said of the kind asked.
  if (ENGLISH_STOP_WORDS.has(phrase.split(/\s+/)[0]?.toLowerCase() ?? '')) return [];
  return contentTerms(phrase);
}

/**
 * Whether an answer is a name of the kind the question describes rather than of the kind it asks
 * for: "The competition X won is held in what city?" answered with "… Harp Contest" names
 * the competition, not its city. Read from the answer's last word, the head of an English name:
 * one the question uses, but not among the words that say what it asks.
 */
function namesWhatIsDescribed(question: string, answer: string): boolean {
  const asked = askedKind(question);
  const head = contentTerms(answer.trim().split(/\s+/).at(-1) ?? '');
  if (asked.length === 0) return false;
  const described = contentTerms(question);
  return head.some((term) => !containsStem(asked, term) && containsStem(described, term));
}

// "where", and a kind of place after "what" or "which" ("what Velmar county", "which cities").
const PLACE_KIND =
  /^\s*where\b|\b(?:what|which)\s+(?:[\p{L}-]+\s+)?(?:(country|city|state|town|county|province|region|nation|village|continent)|countries|cities)\b/giu;
const NEXT_TOKEN = /^(?:\s+([\p{L}'’-]+))?/u;
const LEADING_PREPOSITION = /\b(?:in|from|at|to|into|of)\s+$/i;
// The common irregular past forms of English verbs, which no suffix marks as verbs ("which country won").
const IRREGULAR_PAST = new Set(
  'became began bore bought brought built came chose drew fell fought found gave got grew had held hid kept knew lay led left lost made met paid put ran rose said sank saw sent set shot sold spoke stood took tore won wore wrote'.split(
    ' ',
  ),
);

/**
 * Whether a question asks for a place ("Where is X located?", "from what country", "in which
 * city"): the kind of place closes the asked phrase. A kind followed by a possessive, a hyphen or
 * another noun only describes what is asked ("which town's mayor", "what region manager signed
 * …"): a word after a singular kind must be one of the function words, a verb (in -ed or -s, or
 * an irregular past), or a name where a preposition leads the phrase ("in which county Ada Moss
 * was born"). A plural kind describes no noun after it ("which cities host …").
 */
export function asksPlace(question: string): boolean {
  return [...question.matchAll(PLACE_KIND)].some((match) => {
    const rest = question.slice(match.index + match[0].length);
    if (/^['’-]/.test(rest)) return false;
    const next = NEXT_TOKEN.exec(rest)?.[1];
    if (match[1] === undefined || next === undefined) return true;
    const word = next.toLowerCase();
    if (ENGLISH_STOP_WORDS.has(word) || IRREGULAR_PAST.has(word) || /(?:ed|s)$/.test(word)) return true;
    return /^\p{Lu}/u.test(next) && LEADING_PREPOSITION.test(question.slice(0, match.index));
  });
}

// A preposition that puts what follows it in a place: "based in Port Ellis", "from Bergen". Not
// "to" or "towards": their object is as often a person or a thing ("married to", "sold to").
const BEFORE_PLACE = /\b(?:in|at|near|from|into|across|throughout|outside|within)\s+(?:the\s+)?$/i;

/**
 * Whether the evidence uses an answer as a place somewhere: after a preposition of place ("based
 * in Port Ellis, Maine"), or as an attribute of a noun ("a Norwegian singer", the way a
 * country is named beside what is from it). A name the evidence only ever uses as the subject or
 * object of a clause ("the hosts Ada Moss and Bo", "the former home of the Harbour Grain
 * Exchange") is a person or a thing, whatever a "where" question's chain ended on.
 */
function usedAsPlace(answer: string, chunks: readonly Pick<Chunk__Output, 'text'>[]): boolean {
  const pattern = new RegExp(`(?<![\\p{L}\\p{N}])${escapeRegExp(answer)}(?![\\p{L}\\p{N}])`, 'giu');
  return chunks.some((chunk) =>
    [...chunk.text.matchAll(pattern)].some(
      (match) =>
        BEFORE_PLACE.test(chunk.text.slice(0, match.index)) ||
        attributiveAt(chunk.text, match.index, match.index + match[0].length, []),
    ),
  );
}

// The first lower-case word after "which" or "what": the noun of the kind asked ("which
// department", "what Velmar county"), where the question names one.
const KIND_NOUN = /\b(?:[Ww]hich|[Ww]hat)(?:\s+\p{Lu}[\p{L}\p{N}'’-]*)*\s+(\p{Ll}[\p{L}'’-]*)/u;

/** The noun of the kind a question asks for ("department" of "which department"), if it names one. */
export function kindNounAsked(question: string): string | undefined {
  const noun = KIND_NOUN.exec(question)?.[1];
  return noun === undefined || ENGLISH_STOP_WORDS.has(noun.toLowerCase()) ? undefined : noun.toLowerCase();
}

/**
 * The names the chunks call the kind of thing the question asks for, each with the first chunk
 * that does: by putting the kind's noun after the name ("the Reliability department" for "Which
 * department does X work in?") or by saying the name is one ("Northwind Labs is a software
 * company"). Empty where the question names no kind; names the question states are left out.
 */
function namesCalledKindAsked(
  question: string,
  chunks: readonly Pick<Chunk__Output, 'chunkId' | 'text'>[],
): Map<string, string> {
  const found = new Map<string, string>();
  const noun = kindNounAsked(question);
  if (noun === undefined) return found;
  const kind = escapeRegExp(noun);
  const attributive = new RegExp(`\\b[Tt]he\\s+((?:\\p{Lu}[\\p{L}\\p{N}'’-]*\\s+){1,4})${kind}\\b`, 'gu');
  const predicative = new RegExp(
    `(?:^|[.;]\\s+)((?:\\p{Lu}[\\p{L}\\p{N}'’-]*\\s+){0,3}\\p{Lu}[\\p{L}\\p{N}'’-]*)\\s+(?:is|was)\\s+an?\\s+(?:[\\p{Ll}-]+\\s+){0,2}${kind}\\b`,
    'gu',
  );
  for (const chunk of chunks)
    for (const match of [...chunk.text.matchAll(attributive), ...chunk.text.matchAll(predicative)]) {
      const name = (match[1] ?? '').trim();
      // "He is a football coach": a pronoun that opens a sentence is no name.
      if (contentTerms(name).length === 0 || states(question, name) || found.has(name)) continue;
      found.set(name, chunk.chunkId);
    }
  return found;
}

/** The one name the chunks call the kind asked, with its chunk; undefined where none or several are. */
export function namedAsKindAsked(
  question: string,
  chunks: readonly Pick<Chunk__Output, 'chunkId' | 'text'>[],
): { name: string; chunkId: string } | undefined {
  const [only, ...others] = [...namesCalledKindAsked(question, chunks).entries()];
  return only !== undefined && others.length === 0 ? { name: only[0], chunkId: only[1] } : undefined;
}

/** Whether an answer's head word is the kind of thing asked: "Halden County" names a county. */
function namesAskedKind(question: string, answer: string): boolean {
  const head = contentTerms(answer.trim().split(/\s+/).at(-1) ?? '');
  const asked = askedKind(question);
  return head.some((term) => containsStem(asked, term));
}

/**
 * Whether an answer fits its question: a date where a date is asked ("when", "what year") and a
 * number where a count is, one of the things compared where the question compares the times of
 * several it names ("Was X or Y founded first?"), a name the evidence uses as a place where a
 * place is asked, and otherwise something the question does not already say (the "English" of
 * "the English name of X" is no name); to a "who" or "where" question, not a word the evidence
 * only uses to describe something else.
 */
export function fitsQuestion(
  question: string,
  answer: string,
  chunks: readonly Pick<Chunk__Output, 'chunkId' | 'text'>[],
): boolean {
  const type = answerType(question);
  if (type === 'date') return datesIn(answer).length > 0;
  if (type === 'number') return namesNumber(answer);
  if (type === 'score') return namesScore(answer);
  if (comparesTimesOfSeveral(question) && OFFERS_OPTIONS.test(question)) return states(question, answer);
  if (states(question, answer)) return false;
  // The evidence calls it what is asked ("Kestrel Works is a shipping company"): its head word
  // ("Works") is no description of another thing, whatever the question's verbs ("work for").
  if (namesCalledKindAsked(question, chunks).has(answer)) return true;
  if (namesWhatIsDescribed(question, answer)) return false;
  if (asksPlace(question) && !namesAskedKind(question, answer) && !usedAsPlace(answer, chunks)) return false;
  return ASKS_DESCRIPTION.test(question) || !onlyAttributive(answer, chunks, askedKind(question));
}
