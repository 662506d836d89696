import { describe, expect, it } from 'vitest';
import type { Chunk__Output } from '@hopline/contracts';
import { writtenAsAsked } from '../src/offline/answer-form.js';
import { chunk } from './support/chunks.js';
import { synthesized } from './support/synthesis.js';

// Invented documents: a rowing club, its founder, a composer and a film.
const club = chunk(
  'c-club',
  'Lakeside Otters',
  'The Lakeside Otters is a rowing club based in Port Ellis, Maine. It was founded by Ada Moss and has 40 members.',
);
const membership = chunk(
  'c-member',
  'Member (organisation)',
  'A member is one of the people who belong to a group; a club has one or more members.',
);
const composer = chunk(
  'c-composer',
  'Henrik Valde',
  'Henrik Valde (1702–1760) was a German organist. He wrote 12 operas for the Hamburg stage.',
);
const actress = chunk(
  'c-actress',
  'Ada Moss',
  'Ada Moss is a Norwegian actress. She starred in "Lights over the Harbour", directed by Ilse Varga.',
);

/** Whether offline synthesis abstains on a chain that ended at `answer`, citing `cited`, with `answerForm` on or off. */
const abstains = async (question: string, answer: string, cited: Chunk__Output[], on = true) =>
  (await synthesized(question, [{ focus: question, answer, cited }], on ? [] : ['answerForm'])).abstains;

describe('answer form - an answer the evidence never writes as what is asked abstains', () => {
  it('answer form - a count written only as an amount left open, or as a year of a life, counts nothing', async () => {
    const members = 'How many members does the rowing club founded by Ada Moss have?';
    expect(await abstains(members, 'one', [membership])).toBe(true);
    expect(await abstains(members, 'one', [membership], false)).toBe(false);
    expect(await abstains(members, '40', [club])).toBe(false);
    const operas = 'How many operas did the composer of Ostara Suite write?';
    expect(await abstains(operas, '1702', [composer])).toBe(true);
    expect(await abstains(operas, '1702', [composer], false)).toBe(false);
    expect(await abstains(operas, '12', [composer])).toBe(false);
  });

  it('answer form - "who" is not answered by a name written only as a place', async () => {
    const founder = 'Who founded the rowing club in Port Ellis?';
    expect(await abstains(founder, 'Maine', [club])).toBe(true);
    expect(await abstains(founder, 'Maine', [club], false)).toBe(false);
    expect(await abstains(founder, 'Ada Moss', [club])).toBe(false);
  });

  it('answer form - a word from inside a longer quoted title is no answer; the whole title is', async () => {
    const film = 'Which film directed by Ilse Varga did Ada Moss star in?';
    expect(await abstains(film, 'Harbour', [actress])).toBe(true);
    expect(await abstains(film, 'Harbour', [actress], false)).toBe(false);
    expect(await abstains(film, 'Lights over the Harbour', [actress])).toBe(false);
  });

  it('answer form - read from the chunks the hop cited that write the answer, not from every chunk of the evidence', async () => {
    const members = 'How many members does the rowing club founded by Ada Moss have?';
    const rowers = chunk('c-rowers', 'Rowing', 'Each boat of the club seats one rower.');
    const written = await synthesized(members, [
      { focus: 'Which rowing club did Ada Moss found?', answer: 'Lakeside Otters', cited: [rowers] },
      { focus: members, answer: 'one', cited: [membership] },
    ]);
    expect(written.abstains).toBe(true);
    expect(written.answer).toContain('What was not found: a document that states what the question asks ("one"');
  });

  it('answer form - one mention written as asked is enough, and an answer no chunk writes is not judged here', () => {
    const amounts = [membership, chunk('c-count', 'Rowing', 'Each boat of the club seats one rower.')];
    expect(writtenAsAsked('How many rowers does a boat of the club seat?', 'one', amounts)).toBe(true);
    expect(writtenAsAsked('Who founded the Lakeside Otters?', 'Ada Moss', [composer])).toBe(true);
    // A span of numbers that counts something ("300–400 members") is no span of years.
    const range = chunk('c-range', 'Lakeside Otters', 'The club has 300–400 members.');
    expect(writtenAsAsked('How many members does the club have?', '300', [range])).toBe(true);
  });
});
