import { describe, expect, it } from 'vitest';
import { yearOf } from '../src/offline/answers.js';
import { choiceOptions } from '../src/offline/question.js';
import { writtenAs } from '../src/offline/text.js';
import { chunk } from './support/chunks.js';
import { synthesized } from './support/synthesis.js';

// Invented documents: two directors and two documentaries.
const berg = chunk('c-berg', 'Anna Berg', 'Anna Berg (3 May 1921 – 9 June 1990) was a Swedish film director.');
const lind = chunk('c-lind', 'Tom Lind', 'Tom Lind (born 14 July 1950) is a Danish film director.');
const tides = chunk('c-tides', 'Silent Tides', 'Silent Tides is a 2006 documentary film about the fishing fleet.');
const harbour = chunk('c-harbour', 'The Long Harbour', 'The Long Harbour is a 1976 documentary film about a port.');

describe('comparison answers - the options of a choice', () => {
  it('comparison answers - two names a which-or-who question joins by "or", or by "and" after "out of", are its options', () => {
    expect(choiceOptions('Who was born first out of Anna Berg and Tom Lind?')).toEqual(['Anna Berg', 'Tom Lind']);
    expect(choiceOptions('Which documentary Silent Tides or The Long Harbour was produced first ?')).toEqual([
      'Silent Tides',
      'The Long Harbour',
    ]);
    // Names joined without a word that offers them to choose from are no options.
    expect(choiceOptions('Who directed the film starring Anna Berg and Tom Lind?')).toEqual([]);
    expect(choiceOptions('The song was a collaboration between Anna Berg and the band formed in which city?')).toEqual(
      [],
    );
  });

  it('comparison answers - a choice whose options stand inside the question is decided by their dates', async () => {
    const born = await synthesized('Who was born first out of Anna Berg and Tom Lind?', [
      { focus: 'Who was born first out of Anna Berg?', answer: '3 May 1921', cited: [berg] },
      { focus: 'Who was born first out of Tom Lind?', answer: '14 July 1950', cited: [lind] },
    ]);
    expect(born.abstains).toBe(false);
    expect(born.answer).toMatch(/^Anna Berg \[1\]: 3 May 1921 \[1\], before Tom Lind/);
    const produced = await synthesized('Which documentary Silent Tides or The Long Harbour was produced first ?', [
      { focus: 'Which documentary Silent Tides was produced first?', answer: '2006', cited: [tides] },
      { focus: 'Which documentary The Long Harbour was produced first?', answer: '1976', cited: [harbour] },
    ]);
    expect(produced.answer).toMatch(/^The Long Harbour \[2\]: 1976/);
  });

  it('comparison answers - a life span whose dash was lost still gives the birth year first, the death year last', () => {
    const glued = chunk('c-vane', 'Ida Vane', 'Ida Vane (April 28, 1926February 19, 2016) was a Velmarian novelist.');
    expect(yearOf(glued, false)).toBe(1926);
    expect(yearOf(glued, true)).toBe(2016);
  });
});

// Invented documents: two plant genera, two rock bands, two poets.
const fernwort = chunk(
  'c-fernwort',
  'Fernwort',
  'Fernwort is a genus of shrubs in the family Velaceae. It is native to eastern Asia.',
);
const mossbell = chunk('c-mossbell', 'Mossbell', 'Mossbell is a genus of vines, native to Africa and southern Asia.');
const greyLanterns = chunk('c-grey', 'Grey Lanterns', 'Grey Lanterns is an alternative rock band formed in 1994.');
const paperKites = chunk('c-kites', 'Paper Kites', 'Paper Kites was an American rock band formed in 1985.');
const lenoir = chunk('c-lenoir', 'Paul Lenoir', 'Paul Lenoir (1895 – 1952) was a French poet.');
const marchand = chunk('c-marchand', 'Louis Marchand', 'Louis Marchand (1897 – 1962) was a French essayist.');
const weber = chunk('c-weber', 'Karl Weber', 'Karl Weber (1901 – 1970) was a German essayist.');
const roux = chunk('c-roux', 'Henri Roux', 'Henri Roux (died in Paris, 1961) was a Belgian painter.');
const dumas = chunk('c-dumas', 'Jean Dumas', 'Jean Dumas (born in Paris, 1903) was a Swiss sculptor.');

/**
 * What offline synthesis writes for a joint yes-or-no question, one hop per thing, each hop's
 * answer a stray name of its document (its title's last word).
 */
const judged = (question: string, documents: (typeof fernwort)[], switchedOff: 'jointJudgement'[] = []) =>
  synthesized(
    question,
    documents.map((document) => ({
      focus: `${question} ${document.title}`,
      answer: document.title.split(' ').at(-1) ?? '',
      cited: [document],
    })),
    switchedOff,
  );

describe('comparison answers - a yes-or-no question about things it joins', () => {
  it("comparison answers - both things' documents state the predicate: yes; one states a word of it the other lacks: no", async () => {
    const asia = await judged('Are Fernwort and Mossbell both native to Asia?', [fernwort, mossbell]);
    expect(asia.abstains).toBe(false);
    expect(asia.answer).toMatch(/^yes \[1\]\. It is native to eastern Asia \[1\]\. Mossbell is a genus of vines/);
    expect(
      (await judged('Are Fernwort and Mossbell both native to Asia?', [fernwort, mossbell], ['jointJudgement'])).answer,
    ).toMatch(/^no/);
    expect(
      (await judged('Are Grey Lanterns and Paper Kites both alternative rock bands?', [greyLanterns, paperKites]))
        .answer,
    ).toMatch(/^no \[1\]/);
  });

  it('comparison answers - "the same" kind: yes where the opening sentences share a name, else no', async () => {
    expect(
      (await judged('Were Paul Lenoir and Louis Marchand from the same country?', [lenoir, marchand])).answer,
    ).toMatch(/^yes/);
    expect((await judged('Were Paul Lenoir and Karl Weber from the same country?', [lenoir, weber])).answer).toMatch(
      /^no/,
    );
    // A name both give in an aside before what they say each is (the city of a birth and of a death) is no shared kind.
    expect((await judged('Were Henri Roux and Jean Dumas from the same country?', [roux, dumas])).answer).toMatch(
      /^no/,
    );
  });

  it('comparison answers - a predicate neither document states leaves the judgement open, naming it', async () => {
    const open = await judged('Are Fernwort and Mossbell both evergreen?', [fernwort, mossbell]);
    expect(open.abstains).toBe(true);
    expect(open.answer).toContain('What was not found: a document that states "evergreen"');
  });

  it('comparison answers - a thing whose own document is not in the evidence leaves the judgement open', async () => {
    const open = await judged('Were Paul Lenoir and Karl Weber from the same country?', [lenoir, marchand]);
    expect(open.abstains).toBe(true);
    expect(open.answer).toContain('What was not found: a document about "Karl Weber"');
  });
});

// Invented documents: two goalkeepers, two lakes.
const sokol = chunk(
  'c-sokol',
  'Ivan Sokol',
  'Ivan Sokol (1929 – 1990) was a goalkeeper. He was nicknamed the Grey Hawk.',
);
const brandt = chunk('c-brandt', 'Emil Brandt', 'Emil Brandt (1931 – 2001) was a goalkeeper of Hamburg.');
const northLake = chunk('c-north', 'Kell Lake', 'Kell Lake is a lake in the north of Wenland.');
const southLake = chunk('c-south', 'Varn Lake', 'Varn Lake is a mountain lake in southern Wenland.');

describe('comparison answers - a choice of the option a property is stated of', () => {
  it('comparison answers - the option whose own document states what is asked is chosen, whatever its hop answered', async () => {
    const asked = 'Which goalkeeper was nicknamed the "Grey Hawk", Emil Brandt or Ivan Sokol?';
    const hops = [
      { focus: 'Which goalkeeper was nicknamed the "Grey Hawk", Emil Brandt?', answer: 'Hamburg', cited: [brandt] },
      { focus: 'Which goalkeeper was nicknamed the "Grey Hawk", Ivan Sokol?', answer: 'goalkeeper', cited: [sokol] },
    ];
    const chosen = await synthesized(asked, hops);
    expect(chosen.answer).toBe('Ivan Sokol [2]. He was nicknamed the Grey Hawk [2].');
    expect((await synthesized(asked, hops, ['statedChoice'])).answer).toMatch(/^Emil Brandt/);
  });

  it('comparison answers - a measure compared ("further south") is not read from a word a document states', async () => {
    const asked = 'Which lake is located further south, Kell Lake or Varn Lake?';
    const hops = [
      { focus: 'Which lake is located further south, Kell Lake?', answer: 'Wenland', cited: [northLake] },
      { focus: 'Which lake is located further south, Varn Lake?', answer: 'Wenland', cited: [southLake] },
    ];
    expect((await synthesized(asked, hops)).answer).toEqual((await synthesized(asked, hops, ['statedChoice'])).answer);
  });
});

describe('comparison answers - an option named as its documents write it', () => {
  it('comparison answers - a name the question gives without its diacritics is answered with them', async () => {
    const ruiz = chunk('c-ruiz', 'Jose Ruiz', 'José Ruiz (4 May 1901 – 1960) was a Spanish painter.');
    const chosen = await synthesized('Who was born first out of Jose Ruiz and Tom Lind?', [
      { focus: 'Who was born first out of Jose Ruiz?', answer: '4 May 1901', cited: [ruiz] },
      { focus: 'Who was born first out of Tom Lind?', answer: '14 July 1950', cited: [lind] },
    ]);
    expect(chosen.answer).toMatch(/^José Ruiz \[1\]: 4 May 1901/);
  });

  it("comparison answers - a text's own spelling is read letters, marks and all, and only where the words are the same", () => {
    expect(writtenAs('Born as Jose\u0301 Ruiz in Cádiz.', 'jose ruiz')).toBe('Jose\u0301 Ruiz');
    expect(writtenAs("Niamh O' Farrow (born 1984)", "Niamh O'Farrow")).toBe("Niamh O' Farrow");
    expect(writtenAs('Jose Ruizo was born in Cádiz.', 'Jose Ruiz')).toBeUndefined();
  });
});
