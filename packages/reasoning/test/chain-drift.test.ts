import { describe, expect, it } from 'vitest';
import { bridgeCandidates } from '../src/offline/bridge.js';
import { chunk } from './support/chunks.js';

const titles = { parenthesis: true, comma: true };

describe('chain drift - a hop does not take the question its own entity again, or a word that is no name, as a bridge', () => {
  it("chain drift - a document titled by the question's entity without its middle name offers no bridge of that name", () => {
    const rower = chunk(
      'c-rower',
      'Orla Castell',
      'Orla Venn Castell (born 1980) is a Danish rower who rowed for the Aarhus Rowing Club.',
    );
    const names = bridgeCandidates([rower], {
      relationTerms: ['club'],
      known: ['Orla Venn Castell'],
      retrievedTitles: [rower.title],
      titles,
      anchorWeight: () => 0,
    }).map((candidate) => candidate.name);
    expect(names).toContain('Aarhus Rowing Club');
    expect(names).not.toContain('Orla Castell');
    // A name that shares only its first and last word in another order is another entity.
    const other = bridgeCandidates([{ ...rower, title: 'Castell Orla' }], {
      relationTerms: ['club'],
      known: ['Orla Venn Castell'],
      retrievedTitles: [],
      titles,
      anchorWeight: () => 0,
    }).map((candidate) => candidate.name);
    expect(other).toContain('Castell Orla');
  });
});
