import { describe, expect, it } from 'vitest';
import { choiceOptions } from '../src/offline/question.js';
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
});
