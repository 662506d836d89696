import { describe, expect, it } from 'vitest';
import type { HopExtractionInput, ReasoningSwitch } from '../src/index.js';
import { createOfflineReasoner } from '../src/index.js';
import { namesRoleBeside, roleAskedFor, statesAnyRelation } from '../src/offline/role-holder.js';
import { chunk } from './support/chunks.js';
import { callContext, hopInputs, secondHopOf } from './support/offline-hops.js';

const call = callContext();

// Invented documents: a suite, its composer's document with his sister, and the same composer's
// document as a corpus without the sister's sentence would leave it.
const question = 'Who is the sister of the composer of Ostara Suite?';
const suite = chunk(
  'c-suite',
  'Ostara Suite',
  'Ostara Suite is an organ work written by the composer Henrik Valde. It was first heard at the Lubeck Organ Week.',
);
const withSister = chunk(
  'c-composer',
  'Henrik Valde',
  'Henrik Valde (1702 – 1760) was a German organist. His sister Marta Valde sang in the Hamburg opera.',
);
const withoutSister = chunk(
  'c-composer',
  'Henrik Valde',
  'Henrik Valde (1702 – 1760) was a German organist. He studied with Johann Berger in Hamburg.',
);

async function secondHop(composer: HopExtractionInput['chunks'][number], switchedOff: ReasoningSwitch[] = []) {
  const reasoner = createOfflineReasoner({ switchedOff });
  const step = hopInputs(question, [suite]);
  const first = await reasoner.extractHopAnswer(step({}), call);
  return reasoner.extractHopAnswer(step(secondHopOf(question, first, [suite], [composer])), call);
}

describe('role holder - a role-holder is answered only from a sentence that names the role beside it', () => {
  it('role holder - the role the question word asks the holder of, not one it mentions on the way', () => {
    expect(roleAskedFor('Who is the paternal grandmother of Oskar Lindqvist?')).toBe('grandmother');
    expect(roleAskedFor('The Danish baker famous for rye bread has a brother named what?')).toBe('brother');
    expect(roleAskedFor('Where was the director of Harbour Lights born?')).toBeUndefined();
    expect(roleAskedFor('Ada is one host and she comes from which city?')).toBeUndefined();
  });

  it('role holder - the lead’s document that names the sister answers; one that names only a teacher leaves the hop UNKNOWN', async () => {
    expect(await secondHop(withSister)).toMatchObject({ unknown: false, done: true, answer: 'Marta Valde' });
    expect(await secondHop(withoutSister)).toMatchObject({ unknown: true, answer: '' });
    // Switched off, the lead's document answers with a stray word of it, as before.
    expect(await secondHop(withoutSister, ['askedRole'])).toMatchObject({ unknown: false, answer: 'German' });
  });

  it('role holder - the role may be named beside the answer in any chunk the answer was read from, not only in its own', () => {
    const stray = chunk('c-stray', 'Henrik Valde', 'Henrik Valde played in Hamburg with Marta Valde.');
    const named = chunk('c-named', 'Henrik Valde', 'His sister Marta Valde sang in the Hamburg opera.');
    expect(namesRoleBeside([stray, named], 'Marta Valde', 'sister')).toBe(true);
    expect(namesRoleBeside([stray], 'Marta Valde', 'sister')).toBe(false);
    // A chunk that names the role but not the answer says nothing of the answer.
    expect(namesRoleBeside([stray, chunk('c-other', 'Ola', 'His sister Ola sang.')], 'Marta Valde', 'sister')).toBe(
      false,
    );
  });

  it('role holder - a word the role begins with is no statement of it ("Grand Duke" for "grandfather")', () => {
    expect(statesAnyRelation('He served Piotr, Grand Duke of Varnia.', ['grandfather'])).toBe(false);
    expect(statesAnyRelation('She was the daughter of Olof.', ['grandfather'])).toBe(true);
    expect(statesAnyRelation('The film starring Ann Lee.', ['star'])).toBe(true);
  });
});
