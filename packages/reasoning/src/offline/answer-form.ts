import type { Chunk__Output } from '@hopline/contracts';
import { answerType } from './question.js';
import { escapeRegExp } from './text.js';

/**
 * Whether the evidence states a chain's answer in the form of what the question asks: read from
 * every place the evidence writes the answer, not from the answer alone. A chain whose document
 * is missing still ends on some string of the chunks that are left; what gives such an answer
 * away is how those chunks use it — a number that counts nothing ("one or more words", the
 * years of a life "1820–1887"), a place where a person was asked ("based in Port Ellis"), a word
 * from inside a quoted title ("Harbour" of "Lights over the Harbour"). A right answer, stated
 * where the chain found it, is written as what it is somewhere.
 */

// "one or more", "two or fewer", "ten or so": a number that opens an amount left open counts
// nothing; nor does "one of" a group, which picks one.
const OPEN_AMOUNT_AFTER = /^\s+or\s+(?:more|fewer|less|so)\b/i;
const PICKED_ONE = /^one$/i;
const OF_AFTER = /^\s+of\b/i;
// "(1820–1887)", "(c. 960–1021)": two numbers of three or four digits that a dash joins, the later after.
const SPAN_OF_YEARS = /(?<![\p{N}.,])(\p{N}{3,4})\s*[-–—]\s*(\p{N}{3,4})(?![\p{N}.,])(?!\s+\p{Ll})/gu;
// "who" asks for a person or a body, never a place.
const ASKS_WHO = /^\s*(?:who|whom)\b/i;
// A preposition that puts the name right after it in a place: "based in Port Ellis".
const PLACE_PREPOSITION = /\b(?:in|at|near|from|into|across|throughout|outside|within)\s+(?:the\s+)?$/i;
// A place in a larger one: "based in Port Ellis, Maine" puts Maine in a place too.
const PLACE_IN_PLACE =
  /\b(?:in|at|near|from|into|across|throughout|outside|within)\s+(?:\p{Lu}[\p{L}.'’-]*\s+)*\p{Lu}[\p{L}.'’-]*,\s+$/u;
// A quoted title, straight or curly quotes.
const QUOTED = /"([^"]{2,120})"|“([^”]{2,120})”/g;
const LEADING_ARTICLE = /^(?:the|a|an)\s+/i;

interface Mention {
  text: string;
  start: number;
  end: number;
}

/** Every place the chunks write an answer as a whole word or phrase. */
function mentionsOf(answer: string, chunks: readonly Pick<Chunk__Output, 'text'>[]): Mention[] {
  const pattern = new RegExp(`(?<![\\p{L}\\p{N}])${escapeRegExp(answer.trim())}(?![\\p{L}\\p{N}])`, 'giu');
  return chunks.flatMap((chunk) =>
    [...chunk.text.matchAll(pattern)].map((match) => ({
      text: chunk.text,
      start: match.index,
      end: match.index + match[0].length,
    })),
  );
}

/** Whether a mention is a year of a span of years ("1702–1760"), the later year after the dash. */
function inSpanOfYears({ text, start, end }: Mention): boolean {
  return [...text.matchAll(SPAN_OF_YEARS)].some((span) => {
    const [first, second] = [Number(span[1]), Number(span[2])];
    return first < second && start >= span.index && end <= span.index + span[0].length;
  });
}

/** Whether a number counts nothing where it is written: an amount left open, or a year of a span. */
function countsNothing(mention: Mention): boolean {
  const after = mention.text.slice(mention.end);
  const picked = PICKED_ONE.test(mention.text.slice(mention.start, mention.end)) && OF_AFTER.test(after);
  return picked || OPEN_AMOUNT_AFTER.test(after) || inSpanOfYears(mention);
}

/** Whether a mention stands where a place does: after a preposition of place, or after a place and its comma. */
function asPlace({ text, start }: Mention): boolean {
  const before = text.slice(Math.max(0, start - 120), start);
  return PLACE_PREPOSITION.test(before) || PLACE_IN_PLACE.test(before);
}

/** Whether a mention is a part of a longer quoted title ("Harbour" of "Lights over the Harbour"). */
function insideQuotedTitle({ text, start, end }: Mention, answer: string): boolean {
  return [...text.matchAll(QUOTED)].some((quote) => {
    const title = (quote[1] ?? quote[2] ?? '').trim();
    const opens = quote.index + 1;
    const whole =
      title.replace(LEADING_ARTICLE, '').toLowerCase() === answer.trim().replace(LEADING_ARTICLE, '').toLowerCase();
    return start >= opens && end <= opens + (quote[1] ?? quote[2] ?? '').length && !whole;
  });
}

/**
 * Whether the evidence writes an answer as what the question asks: a count somewhere as a count,
 * a name answering "who" somewhere other than as a place, and any answer somewhere other than
 * inside a longer quoted title. True where no chunk writes it at all (nothing to read it from).
 */
export function writtenAsAsked(
  question: string,
  answer: string,
  chunks: readonly Pick<Chunk__Output, 'text'>[],
): boolean {
  const mentions = mentionsOf(answer, chunks);
  if (mentions.length === 0) return true;
  if (answerType(question) === 'number' && mentions.every(countsNothing)) return false;
  if (ASKS_WHO.test(question) && mentions.every(asPlace)) return false;
  return !mentions.every((mention) => insideQuotedTitle(mention, answer));
}
