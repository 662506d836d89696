import { describe, expect, it } from 'vitest';
import type { HopExtractionInput } from '../src/index.js';
import { createOfflineReasoner } from '../src/index.js';
import { chunk } from './support/chunks.js';
import { callContext, hopInputs, secondHopOf } from './support/offline-hops.js';

const call = callContext();
const reasoner = createOfflineReasoner();
const without = createOfflineReasoner({ switchedOff: ['bridgeMentions'] });

const question = 'What is the name of the castle in the city where the performer of Lantern Hymns was born?';
const album = chunk(
  'c-album',
  'Lantern Hymns',
  'Lantern Hymns is a studio album released in 2008 by the singer Mara Quill. It was recorded in one week.',
);
// The performer has no document of her own; another album's document names her, and its own subject is no link.
const otherAlbum = chunk(
  'c-other-album',
  'Deep Current',
  'Deep Current is the second album by Halden drummer Mara Quill. The band toured with Oskar Brandt in 2011.',
);
const step = hopInputs(question, [album]);
const threeHops = { expectedHops: 3, hopsLeft: 2 };

async function secondHop(chunks: HopExtractionInput['chunks'], using = reasoner) {
  const first = await using.extractHopAnswer(step(threeHops), call);
  expect(first.bridgeEntities[0]).toBe('Mara Quill');
  return using.extractHopAnswer(
    step({ ...threeHops, ...secondHopOf(question, first, [album], chunks), hopsLeft: 1 }),
    call,
  );
}

describe('bridge mentions - a lead with no document of its own is followed where other documents name it', () => {
  it('bridge mentions - the next bridge is read from the sentence naming the lead, not from the chunk it stands in', async () => {
    const finding = await secondHop([album, otherAlbum]);
    expect(finding).toMatchObject({ unknown: false, done: false, answer: 'Halden' });
    expect(finding.bridgeEntities).not.toContain('Deep Current');
    expect(finding.bridgeEntities).not.toContain('Oskar Brandt');
    expect(finding.citedChunkIds).toEqual(['c-other-album']);
  });

  it('bridge mentions - switched off, the hop without the lead’s document says UNKNOWN', async () => {
    expect(await secondHop([album, otherAlbum], without)).toMatchObject({ unknown: true });
  });

  it('bridge mentions - the last hop still answers only from the document about what it was sent for', async () => {
    const first = await reasoner.extractHopAnswer(step({}), call);
    const last = await reasoner.extractHopAnswer(
      step(secondHopOf(question, first, [album], [album, otherAlbum])),
      call,
    );
    expect(last).toMatchObject({ unknown: true });
  });

  it('bridge mentions - a one-word lead, named by chunks about anything, is not followed through them', async () => {
    const dishQuestion = 'Who directed the film made in the country where the dish Rostova comes from?';
    const dish = chunk('c-dish', 'Rostova', 'Rostova is a dish of beef in cream. It is eaten across Czech towns.');
    const film = chunk('c-film', 'Quick Steps', 'Quick Steps is a 1977 Czech film directed by Milan Orel.');
    const first = await reasoner.extractHopAnswer(hopInputs(dishQuestion, [dish])(threeHops), call);
    const led = { ...first, answer: 'Czech', bridgeEntities: ['Czech'], nextQuery: 'Czech country' };
    const second = await reasoner.extractHopAnswer(
      hopInputs(dishQuestion, [dish])({
        ...threeHops,
        ...secondHopOf(dishQuestion, led, [dish], [dish, film]),
        hopsLeft: 1,
      }),
      call,
    );
    expect(second).toMatchObject({ unknown: true });
  });
});
