import { describe, expect, it } from 'vitest';
import type { ReasoningSwitch } from '../src/index.js';
import { chunk } from './support/chunks.js';
import { askAsOneLookup } from './support/fixtures.js';

// Invented documents: a cup final whose document states where it was played without the verb
// "played", the two clubs it names, a coach whose document dates his start with "became", and an
// analyst whose document names her department but not the verb "work" (her company's does).
const corpus = [
  chunk(
    'c-cup',
    '2040 Lantern Cup',
    'The 2040 Lantern Cup was won by the Harbour Kites, who beat the Iron Gulls 2–0 in the final in Valdris.',
  ),
  chunk('c-kites', 'Harbour Kites', 'The Harbour Kites are a football club from Marrow Bay, founded in 1899.'),
  chunk('c-gulls', 'Iron Gulls', 'The Iron Gulls are a football club founded in 1921. They play at Gull Park.'),
  chunk(
    'c-coach',
    'Oren Vale',
    'Oren Vale is a football coach. As a player he won two titles with the Iron Gulls before retiring. He became head coach of the Harbour Kites in 2036.',
  ),
  chunk(
    'c-analyst',
    'Ada Lund',
    'Ada Lund is a senior analyst in the Forecasting department of Kestrel Works. She joined in 2030.',
  ),
  chunk(
    'c-works',
    'Kestrel Works',
    'Kestrel Works is a shipping company founded in 2001 in Tallmoor. It employs about 300 people.',
  ),
];

const answerOf = (question: string, switchedOff: ReasoningSwitch[] = []) =>
  askAsOneLookup(corpus, question, { topK: 4, switchedOff });

describe('guessed bridge - a hop taken for a hidden bridge that explains nothing leaves the answer to the first hop', () => {
  it.each([
    ['Where was the 2040 Lantern Cup final played?', 'Valdris'],
    ['When did Oren Vale become coach of the Harbour Kites?', '2036'],
    ['Which department does Ada Lund work in?', 'Forecasting'],
  ])('guessed bridge - "%s" is answered %s, from the first hop\'s document', async (question, answer) => {
    const { done, trace } = await answerOf(question);
    expect(trace.hops.length).toBeGreaterThan(1);
    expect(done.abstained).toBe(false);
    expect(done.answer.startsWith(`${answer} [`)).toBe(true);
  });

  it.each([
    ['Where was the 2040 Lantern Cup final played?', 'Valdris'],
    ['When did Oren Vale become coach of the Harbour Kites?', '2036'],
    ['Which department does Ada Lund work in?', 'Forecasting'],
  ])('guessed bridge - switched off, "%s" is not answered %s', async (question, answer) => {
    const { done } = await answerOf(question, ['guessedBridgeFallback']);
    expect(done.answer.startsWith(`${answer} [`)).toBe(false);
  });
});

describe('guessed bridge - the noun of the kind asked is no sign of a hidden bridge', () => {
  it('guessed bridge - "Which team won the 2040 Lantern Cup?" is answered from the cup\'s document in one hop, though it never says "team"', async () => {
    const { done, trace } = await answerOf('Which team won the 2040 Lantern Cup?');
    expect(trace.hops).toHaveLength(1);
    expect(done.abstained).toBe(false);
    expect(done.answer.startsWith('Harbour Kites [')).toBe(true);
  });
});

describe('guessed bridge - the words left unexplained are those of the chunk that names all the question names', () => {
  it('guessed bridge - "By what score did the Harbour Kites win the 2040 Lantern Cup final?" is answered 2–0 from the cup\'s document, not left open for the club\'s', async () => {
    const { done } = await answerOf('By what score did the Harbour Kites win the 2040 Lantern Cup final?');
    expect(done.abstained).toBe(false);
    expect(done.answer.startsWith('2–0 [')).toBe(true);
  });
});
