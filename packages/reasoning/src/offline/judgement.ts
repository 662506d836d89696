import type { Chunk__Output } from '@hopline/contracts';
import { containsStem, contentTerms, entityKey, namedSpans, spanTokens } from '@hopline/text';
import type { EvidenceItem } from '../reasoner/reasoner.js';
import { isAbout } from './bridge.js';
import { asksComparative, conjoinedAnchors, questionAnchors } from './question.js';
import { expandRelations } from './relations.js';
import type { TitleConventions } from './text.js';
import { QUESTION_WORDS, sentences } from './text.js';

/**
 * A yes-or-no question about things it joins ("Are A and B both native to Asia?", "Were A and B
 * from the same country?"), judged from each thing's own document rather than from what a hop
 * happened to answer for it.
 */

// A question that opens with its verb asks yes or no.
const ASKS_YES_OR_NO = /^\s*(?:is|are|was|were|do|does|did)\b/i;
// "the same country", "the same topic": the things share one value of a kind.
const SHARED_VALUE = /\bsame\s+\p{L}/iu;
// The auxiliary a question opens with is no part of the first name ("Are Quillwort").
const OPENING_AUXILIARY = /^\s*(?:is|are|was|were|do|does|did)\s+/i;

/** A sentence of a judged thing's document that the verdict rests on, with its evidence number. */
interface Support {
  text: string;
  index: number;
}

type Judgement =
  { verdict: 'yes' | 'no'; support: readonly Support[] } | { missing: readonly string[] } | { unstated: string };

/** The things a yes-or-no question joins by "and" and asks one thing of; [] for any other question. */
export function judgedThings(question: string): string[] {
  if (!ASKS_YES_OR_NO.test(question)) return [];
  return conjoinedAnchors(question, questionAnchors(question)).map((name) => name.replace(OPENING_AUXILIARY, ''));
}

const openingOf = (chunk: Chunk__Output): string => sentences(chunk.text)[0]?.text ?? chunk.text;

// The copula of an opening sentence: what follows it says what its subject is ("was a Valdorian glassblower").
const COPULA = /\s(?:is|was|are|were)\s/i;

/**
 * The names an opening sentence gives of what its subject is, as terms, other than those of the
 * things judged: those after its copula, not those of an aside before it ("(born in Paris)").
 */
function openingNames(chunk: Chunk__Output, own: readonly string[]): string[] {
  const whole = openingOf(chunk);
  const copula = COPULA.exec(whole);
  const opening = copula ? whole.slice(copula.index + copula[0].length) : whole;
  return namedSpans(opening, spanTokens(opening))
    .flatMap((span) => contentTerms(span.text))
    .filter((term) => !own.includes(term));
}

/**
 * What the question asks of the things: its content words but the things' names and the words
 * that ask ("both native to Velmar" asks "native", "velmar").
 */
function predicateTerms(question: string, things: readonly string[]): string[] {
  const named = things.flatMap((thing) => contentTerms(thing));
  return [...new Set(contentTerms(question).filter((term) => !QUESTION_WORDS.has(term) && !containsStem(named, term)))];
}

const statesTerm = (text: string, term: string): boolean => {
  const said = contentTerms(text);
  return expandRelations([term]).some((word) => containsStem(said, word));
};

/** The sentence of a document that states the most of the predicate's words, the opening on a tie. */
function sentenceStatingMost(item: EvidenceItem, predicate: readonly string[]): Support {
  const scored = sentences(item.chunk.text).map((sentence) => ({
    text: sentence.text,
    count: predicate.filter((term) => statesTerm(sentence.text, term)).length,
  }));
  const best = scored.reduce((top, next) => (next.count > top.count ? next : top), {
    text: openingOf(item.chunk),
    count: 0,
  });
  return { text: best.text, index: item.index };
}

/**
 * The judgement of a joint yes-or-no question from the things' own documents; undefined for a
 * question that is not one. A thing with no document in the evidence leaves it undecided: its
 * document is what is missing.
 *
 * "The same X": yes where the documents' opening sentences, where a document says what and where
 * its subject is, share a name in what they say it is ("was a Valdorian glassblower", "a Valdorian
 * critic"), else no. Otherwise the
 * predicate's words: yes where every word one document states, each other states too, and they
 * share at least one; a word one states and another does not ("an Estonian synth-folk duo", "an
 * Estonian folk duo") makes it no. A word none states says nothing either way: documents word
 * a property their own way ("lineages of river fish" of "a lineage of 12 fish"); where no
 * document states any, the judgement is left open, naming what was asked.
 */
export function judgeJointly(
  question: string,
  evidence: readonly EvidenceItem[],
  titles: TitleConventions,
): Judgement | undefined {
  const names = judgedThings(question);
  if (names.length < 2) return undefined;
  const documents = names.map((name) => evidence.find((item) => isAbout(item.chunk, name, titles)));
  const missing = names.filter((_, position) => documents[position] === undefined);
  if (missing.length > 0) return { missing };
  const items = documents as EvidenceItem[];
  if (SHARED_VALUE.test(question)) {
    const own = names.flatMap((name) => contentTerms(entityKey(name)));
    const [first, ...rest] = items.map((item) => openingNames(item.chunk, own));
    const shared = (first ?? []).some((term) => rest.every((other) => other.includes(term)));
    const support = items.map((item) => ({ text: openingOf(item.chunk), index: item.index }));
    return { verdict: shared ? 'yes' : 'no', support };
  }
  const predicate = predicateTerms(question, names);
  const statedBy = predicate.map((term) => items.filter((item) => statesTerm(item.chunk.text, term)).length);
  const split = statedBy.some((count) => count > 0 && count < items.length);
  const shared = statedBy.some((count) => count === items.length);
  // No document states a word of it: a verdict would cite chunks that say nothing either way.
  if (!split && !shared) return { unstated: predicate.join(' ') };
  return {
    verdict: shared && !split ? 'yes' : 'no',
    support: items.map((item) => sentenceStatingMost(item, predicate)),
  };
}

/**
 * The option of a choice that asks of a property, not a measure, whose own document states the
 * most of the words the question asks of it ("Which wrestler was nicknamed the Iron Heron, A
 * or B?": the one whose document says "Iron Heron"), with that document; undefined where some
 * option has no document in the evidence or no option's states more than every other's. The
 * support is the sentence of that document stating the most of them.
 */
export function optionStatingMost(
  question: string,
  options: readonly string[],
  evidence: readonly EvidenceItem[],
  titles: TitleConventions,
): { option: string; support: Support } | undefined {
  // A measure compared ("further south") is no word a document states of the one that has more of it.
  if (asksComparative(question)) return undefined;
  const predicate = predicateTerms(question, options);
  const scored = options.map((option) => {
    const document = evidence.find((item) => isAbout(item.chunk, option, titles));
    const stated = document ? predicate.filter((term) => statesTerm(document.chunk.text, term)).length : -1;
    return { option, document, stated };
  });
  if (scored.some((entry) => entry.document === undefined)) return undefined;
  const [best, next] = [...scored].sort((a, b) => b.stated - a.stated);
  if (!best?.document || (next && next.stated >= best.stated)) return undefined;
  return { option: best.option, support: sentenceStatingMost(best.document, predicate) };
}
