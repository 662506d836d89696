import { describe, expect, it } from 'vitest';
import { createOfflineReasoner } from '../src/index.js';
import { chunk } from './support/chunks.js';
import { callContext, hopInputs, secondHopOf } from './support/offline-hops.js';

const call = callContext();
const reasoner = createOfflineReasoner();

describe('relation words - evidence states a relation in its own words', () => {
  it('relation words - "graduate" is answered where the evidence says "educated at", a sentence it opens', async () => {
    const question = 'Where did the founder of Quill Press graduate?';
    const press = chunk(
      'c-press',
      'Quill Press',
      'Quill Press is a small publishing house run by its founder Tomas Lindqvist.',
    );
    const founder = chunk(
      'c-founder',
      'Tomas Lindqvist',
      'Tomas Lindqvist (born 1950 in Uppsala) is a Swedish publisher. Educated at Linden Academy, he later worked in Stockholm.',
    );
    const step = hopInputs(question, [press]);
    const first = await reasoner.extractHopAnswer(step({}), call);
    expect(first.bridgeEntities[0]).toBe('Tomas Lindqvist');
    const second = await reasoner.extractHopAnswer(step(secondHopOf(question, first, [press], [founder])), call);
    expect(second).toMatchObject({ unknown: false, done: true, answer: 'Linden Academy' });
  });
});
