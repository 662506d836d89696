import { describe, expect, it } from 'vitest';
import type { HopExtractionInput } from '../src/index.js';
import { createOfflineReasoner } from '../src/index.js';
import { chunk } from './support/chunks.js';
import { callContext, hopInputs, secondHopOf } from './support/offline-hops.js';

const call = callContext();
const reasoner = createOfflineReasoner();

const question = 'What was the nationality of the composer of Ostara Suite?';
const suite = chunk(
  'c-suite',
  'Ostara Suite',
  'Ostara Suite is an organ work written by the composer Henrik Valde. It was first heard at the Lubeck Organ Week.',
);
// The lead's own document says what he was, never the word the question asks it with.
const composer = chunk(
  'c-composer',
  'Henrik Valde',
  'Henrik Valde (1702 – 1760) was a German organist who spent his life in Hamburg churches.',
);
// A runner-up's document: about another thing the chain could have meant.
const festival = chunk(
  'c-festival',
  'Lubeck Organ Week',
  'The Lubeck Organ Week is a festival held every spring in Lubeck, with concerts by Danish organists.',
);

const step = hopInputs(question, [suite]);

async function secondHop(chunks: HopExtractionInput['chunks']) {
  const first = await reasoner.extractHopAnswer(step({}), call);
  expect(first.bridgeEntities.slice(0, 2)).toEqual(['Henrik Valde', 'Lubeck Organ Week']);
  return reasoner.extractHopAnswer(step(secondHopOf(question, first, [suite], chunks)), call);
}

describe('lead relation - the lead bridge’s own document answers without the question’s word for the relation', () => {
  it("lead relation - a name read from the lead bridge's document is the answer, though it never says 'nationality'", async () => {
    expect(await secondHop([composer, festival])).toMatchObject({ unknown: false, done: true, answer: 'German' });
  });

  it("lead relation - a runner-up's document that does not state the relation leaves the hop UNKNOWN", async () => {
    expect(await secondHop([festival])).toMatchObject({ unknown: true, answer: '' });
  });

  it("lead relation - a date read from a runner-up's document that does not state the relation leaves the hop UNKNOWN", async () => {
    const asked = 'In what year did the composer of Ostara Suite retire?';
    const dated = {
      ...festival,
      text: 'The Lubeck Organ Week was first held in 1748, with concerts by Danish organists.',
    };
    const retired = {
      ...composer,
      text: 'Henrik Valde was a German organist. He retired from the Hamburg churches in 1751.',
    };
    const ask = hopInputs(asked, [suite]);
    const first = await reasoner.extractHopAnswer(ask({}), call);
    const second = (chunks: HopExtractionInput['chunks']) =>
      reasoner.extractHopAnswer(ask(secondHopOf(asked, first, [suite], chunks)), call);
    expect(await second([retired, dated])).toMatchObject({ unknown: false, answer: '1751' });
    expect(await second([dated])).toMatchObject({ unknown: true, answer: '' });
  });
});
