import { StopReason } from '@hopline/contracts';
import { describe, expect, it } from 'vitest';
import type { ReasoningSwitch } from '../src/index.js';
import { chunk } from './support/chunks.js';
import { askAsOneLookup } from './support/fixtures.js';

// Invented documents: a cereal whose maker is a company, and the company's own document, which
// says where it is. The question names the cereal and asks where its maker is.
const corpus = [
  chunk(
    'c-cereal',
    'Frost Rings',
    'Frost Rings is a breakfast cereal made by Halvorsen Mills. It was a sponsor of the radio serial Captain Fathom.',
  ),
  chunk(
    'c-maker',
    'Halvorsen Mills',
    'Halvorsen Mills is a food company. Its head office is in Tarnby, Velmar, where it was founded in 1911.',
  ),
  chunk('c-serial', 'Captain Fathom', 'Captain Fathom was a radio serial broadcast from 1938 to 1951.'),
];

const QUESTION = 'Where is the Frost Rings maker and former Captain Fathom sponsor located?';

const answerOf = (switchedOff: ReasoningSwitch[] = []) => askAsOneLookup(corpus, QUESTION, { topK: 3, switchedOff });

describe('unfit lookup - an answer of another kind than asked is looked up, not stopped on', () => {
  it("unfit lookup - a company read where a place is asked takes one more hop, to the company's document, and answers with its place", async () => {
    const { done, trace } = await answerOf();
    expect(done.stopReason).toBe(StopReason.SUFFICIENT);
    expect(done.abstained).toBe(false);
    expect(done.answer).toMatch(/^Tarnby/);
    expect(trace.hops.map((hop) => hop.answer?.answer)).toEqual(['Halvorsen Mills', 'Tarnby']);
    expect(trace.hops[1]?.query).toMatch(/^Halvorsen Mills /);
  });

  it('unfit lookup - switched off, the chain stops on the company and the answer abstains, naming what is missing', async () => {
    const { done, trace } = await answerOf(['unfitLookup']);
    expect(trace.hops).toHaveLength(1);
    expect(done.abstained).toBe(true);
    expect(done.answer).toContain('("Halvorsen Mills", where the chain ended, is not of that kind)');
  });
});

// Invented documents: a harpist who won a contest, and the contest's own document, which names
// it in another language right after the word that led the chain to it, and then says where it
// is held. The question asks for the city.
const contestCorpus = [
  chunk('c-harpist', 'Ada Moss', 'Ada Moss is a harpist from Velmar. She won the first Tarnby Harp Contest in 1931.'),
  chunk(
    'c-contest',
    'Tarnby Harp Contest',
    'The Tarnby Harp Contest (Velmari: Tarnbyer Harpekonkurranse) is a music competition held in Dunmore, Velmar. It has run every four years since 1955.',
  ),
];

const CONTEST_QUESTION = 'In what city is the contest Ada Moss won in 1931 held?';

const contestAnswerOf = (switchedOff: ReasoningSwitch[] = []) =>
  askAsOneLookup(contestCorpus, CONTEST_QUESTION, { topK: 2, switchedOff });

describe('past-plan words - a looked-up answer is read by the words still asked', () => {
  it('past-plan words - the contest\'s document is read for where it is held, not for the name beside "contest"', async () => {
    const { done, trace } = await contestAnswerOf();
    expect(trace.hops.map((hop) => hop.answer?.answer)).toEqual(['Tarnby Harp Contest', 'Dunmore']);
    expect(done.abstained).toBe(false);
    expect(done.answer).toMatch(/^Dunmore/);
  });

  it('past-plan words - switched off, the lookup reads the name beside the word that led to the contest, and abstains', async () => {
    const { done, trace } = await contestAnswerOf(['pastPlanWords']);
    expect(trace.hops.map((hop) => hop.answer?.answer)).toEqual(['Tarnby Harp Contest', 'Velmari']);
    expect(done.abstained).toBe(true);
  });
});
