import { describe, expect, it } from 'vitest';
import { isAbout } from '../src/offline/bridge.js';
import { isNameForm } from '../src/offline/name-forms.js';
import { titleConventions } from '../src/offline/text.js';
import { chunk } from './support/chunks.js';

describe('name forms', () => {
  it('name forms - initials name what their capitalised words name', () => {
    expect(isNameForm('HVT', 'Harbor Valley Telegraph')).toBe(true);
    expect(isNameForm('Harbor Valley Telegraph', 'H.V.T.')).toBe(true);
    expect(isNameForm('BoA', 'Bank of America')).toBe(false);
    expect(isNameForm('HVB', 'Harbor Valley Telegraph')).toBe(false);
    expect(isNameForm('HVT', 'Harbor valley telegraph')).toBe(false);
  });

  it('name forms - a rank before a name is no part of it', () => {
    expect(isNameForm('Orsolan', 'Emperor Orsolan')).toBe(true);
    expect(isNameForm('Ilyas Varen', 'Crown Prince Ilyas Varen')).toBe(true);
    expect(isNameForm('Orsolan', 'Young Orsolan')).toBe(false);
  });

  it('name forms - the last word of a name is no form of it', () => {
    expect(isNameForm('Northern Velmar', 'Velmar')).toBe(false);
    expect(isNameForm('Ines Dravot', 'Dravot')).toBe(false);
  });

  it('name forms - one word spelt a vowel or two apart is the same name, not a number, an initial or another consonant', () => {
    expect(isNameForm('Katrin Velde', 'Katreen Velde')).toBe(true);
    expect(isNameForm('Odo II, Count of Varnia', 'Odo I, Count of Varnia')).toBe(false);
    expect(isNameForm('Katrin Velde', 'Matrin Velde')).toBe(false);
    expect(isNameForm('Katrin Osten', 'Katreen Velde')).toBe(false);
    // Two surnames a consonant apart are two people.
    expect(isNameForm('Mara Tindley', 'Mara Tinley')).toBe(false);
  });

  it('name forms - a document titled with another form of a name is about it, unless switched off', () => {
    const network = chunk('network', 'HVT', 'HVT (an initialism of the Harbor Valley Telegraph) is a network.');
    expect(isAbout(network, 'Harbor Valley Telegraph', titleConventions([]))).toBe(true);
    expect(isAbout(network, 'Harbor Valley Telegraph', titleConventions(['nameForms']))).toBe(false);
    expect(
      isAbout(
        chunk('director', 'Katrin Velde (director)', 'Katrin Velde is a director.'),
        'Katreen Velde',
        titleConventions([]),
      ),
    ).toBe(true);
  });
});
