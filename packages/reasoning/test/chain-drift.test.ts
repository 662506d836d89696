import type { Chunk__Output } from '@hopline/contracts';
import { describe, expect, it } from 'vitest';
import type { SynthesisInput } from '../src/index.js';
import { createOfflineReasoner } from '../src/index.js';
import { readTypedAnswer } from '../src/offline/answers.js';
import { bridgeCandidates } from '../src/offline/bridge.js';
import { chunk } from './support/chunks.js';
import { callContext, hopInputs } from './support/offline-hops.js';

const titles = { parenthesis: true, comma: true, nameForms: true };

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

describe('chain drift - a count is read only where a number counts what is asked', () => {
  const ask = (text: string) =>
    readTypedAnswer('number', [chunk('c-composer', 'Aldo Brun', text)], ['time', 'plague', 'strike'])?.answer;

  it('chain drift - the day and year of a date, "one of", a number that counts something else or opens a name are no count', () => {
    expect(ask('Aldo Brun (4 March 1678 – 28 July 1741) was a composer and violinist.')).toBeUndefined();
    expect(ask('He was one of the composers of the city, and wrote more than forty operas.')).toBeUndefined();
    expect(ask('His best known work is the Seven Lanterns, played in the city.')).toBeUndefined();
    expect(ask('The city hall was rebuilt in 1981, since 2003 a museum.')).toBeUndefined();
  });

  it('chain drift - a number beside what the question counts, or with nothing after it, is read', () => {
    expect(ask('Born on 4 March 1678, he saw the plague strike the city 22 times.')).toBe('22');
    expect(ask('The chronicle counts the strikes of the plague at 17, the last of them a mild one.')).toBe('17');
  });

  it('chain drift - a question for a number or a date is not answered with a name where the evidence states neither', async () => {
    const question = 'How many times did the plague strike Verano?';
    const city = chunk('c-verano', 'Verano', 'Verano is a city in Tessaly founded by the Romans as a harbour.');
    const finding = await createOfflineReasoner().extractHopAnswer(
      hopInputs(question, [city])({ expectedHops: 1, hopsLeft: 0 }),
      callContext(),
    );
    expect(finding).toMatchObject({ unknown: true, answer: '' });
  });
});

describe('chain drift - a choice weighs an option only by a document about it', () => {
  const question = 'Which goalkeeper was nicknamed "the Wall", Aron Vest or Pal Norum?';
  const vest = chunk('c-vest', 'Aron Vest', 'Aron Vest (1931–2015) was a goalkeeper of Brann, nicknamed "the Wall".');
  const norum = chunk('c-norum', 'Pal Norum', 'Pal Norum (1929–1990) was a goalkeeper of Viking, nicknamed "the Cat".');
  const hop = (n: number, option: string, cited: string) => ({
    hop: n,
    focus: `Which goalkeeper was nicknamed "the Wall", ${option}?`,
    query: option,
    finding: {
      answer: 'Brann',
      unknown: false,
      done: true,
      nextQuery: '',
      confidence: 0.8,
      citedChunkIds: [cited],
      bridgeEntities: [],
    },
  });
  async function written(secondCites: string, evidence: Chunk__Output[]): Promise<string> {
    let text = '';
    const input: SynthesisInput = {
      question,
      hops: [hop(1, 'Aron Vest', 'c-vest'), hop(2, 'Pal Norum', secondCites)],
      evidence: evidence.map((item, index) => ({ index: index + 1, chunk: item, hop: 1, bridgeEntity: '' })),
      complete: true,
      missing: '',
    };
    for await (const piece of createOfflineReasoner().synthesize(input, callContext())) text += piece;
    return text;
  }

  it("chain drift - an option whose hop read only another option's document is named as missing", async () => {
    const text = await written('c-vest', [vest]);
    expect(text).toMatch(/^I cannot answer/);
    expect(text).toContain('a document about "Pal Norum"');
  });

  it('chain drift - with each option read from its own document the choice is made', async () => {
    expect(await written('c-norum', [vest, norum])).not.toMatch(/^I cannot answer/);
  });
});
