import { describe, expect, it } from 'vitest';
import { isAbout } from '../src/offline/bridge.js';
import { isNameForm } from '../src/offline/name-forms.js';
import { titleConventions } from '../src/offline/text.js';
import { chunk } from './support/chunks.js';

describe('name forms', () => {
  it('name forms - initials name what their capitalised words name', () => {
    expect(isNameForm('CBS', 'Columbia Broadcasting System')).toBe(true);
    expect(isNameForm('Columbia Broadcasting System', 'C.B.S.')).toBe(true);
    expect(isNameForm('BoA', 'Bank of America')).toBe(false);
    expect(isNameForm('NBC', 'Columbia Broadcasting System')).toBe(false);
    expect(isNameForm('CBS', 'Columbia broadcasting system')).toBe(false);
  });

  it('name forms - a rank before a name is no part of it', () => {
    expect(isNameForm('Aurangzeb', 'Emperor Aurangzeb')).toBe(true);
    expect(isNameForm('Dara Shikoh', 'Crown Prince Dara Shikoh')).toBe(true);
    expect(isNameForm('Aurangzeb', 'Young Aurangzeb')).toBe(false);
  });

  it('name forms - the last word of a name is no form of it', () => {
    expect(isNameForm('Southern California', 'California')).toBe(false);
    expect(isNameForm('Deb Lacusta', 'Lacusta')).toBe(false);
  });

  it('name forms - one word spelt a vowel or two apart is the same name, not a number, an initial or another consonant', () => {
    expect(isNameForm('Rajiv Anchal', 'Rajeev Anchal')).toBe(true);
    expect(isNameForm('Anthony II, Count of Ligny', 'Anthony I, Count of Ligny')).toBe(false);
    expect(isNameForm('Rajiv Anchal', 'Sanjiv Anchal')).toBe(false);
    expect(isNameForm('Rajiv Gandhi', 'Rajeev Anchal')).toBe(false);
    // Two surnames a consonant apart are two people.
    expect(isNameForm('Alex Hadley', 'Alex Haley')).toBe(false);
  });

  it('name forms - a document titled with another form of a name is about it, unless switched off', () => {
    const network = chunk('network', 'CBS', 'CBS (an initialism of the Columbia Broadcasting System) is a network.');
    expect(isAbout(network, 'Columbia Broadcasting System', titleConventions([]))).toBe(true);
    expect(isAbout(network, 'Columbia Broadcasting System', titleConventions(['nameForms']))).toBe(false);
    expect(
      isAbout(
        chunk('director', 'Rajiv Anchal (director)', 'Rajiv Anchal is a director.'),
        'Rajeev Anchal',
        titleConventions([]),
      ),
    ).toBe(true);
  });
});
