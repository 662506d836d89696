import { describe, expect, it } from 'vitest';
import { chunk } from './support/chunks.js';
import { synthesized } from './support/synthesis.js';
import { fitsQuestion, namedAsKindAsked } from '../src/offline/fit.js';

// Invented documents: a film, its director, and a restaurant whose chef the chain came to.
const film = chunk(
  'c-film',
  'Harbour Lights',
  'Harbour Lights is a 2011 Canadian drama film directed by Ilse Varga. It premiered in Halifax.',
);
const director = chunk(
  'c-director',
  'Ilse Varga',
  'Ilse Varga (born 3 May 1970) is a Hungarian director. She has two sisters, Anna and Dora.',
);
const restaurant = chunk(
  'c-restaurant',
  'Tomas Berg',
  'Tomas Berg is a Swedish chef known for his work at the two-star Ferrand guide restaurant Fjord House in Malmo.',
);

/** What offline synthesis writes when the chain's one hop ended at `answer`, citing `cited`. */
const answered = (question: string, answer: string, cited = [film, director], switchedOff: 'answerFit'[] = []) =>
  synthesized(question, [{ focus: question, answer, cited }], switchedOff);

describe('answer fit - a chain that ended at an answer of another kind than asked abstains', () => {
  it('answer fit - a question for a date is not answered with a name, and the abstention says what is missing', async () => {
    const asked = 'When did the film directed by Ilse Varga premiere?';
    const written = await answered(asked, 'Halifax');
    expect(written.abstains).toBe(true);
    expect(written.answer).toContain('What was not found: a document that states what the question asks ("Halifax"');
    expect((await answered(asked, 'Halifax', [film, director], ['answerFit'])).abstains).toBe(false);
    expect((await answered(asked, '2011')).abstains).toBe(false);
  });

  it('answer fit - a question for a count is not answered with a name', async () => {
    const asked = 'How many sisters does the director of Harbour Lights have?';
    expect((await answered(asked, 'Anna')).abstains).toBe(true);
    expect((await answered(asked, 'two')).abstains).toBe(false);
  });

  it('answer fit - an answer the question already says is no answer', async () => {
    const asked = 'what is the canadian title of the film directed by Ilse Varga?';
    expect((await answered(asked, 'Canadian')).abstains).toBe(true);
    expect((await answered(asked, 'Canadian', [film, director], ['answerFit'])).abstains).toBe(false);
  });

  it('answer fit - a which-first question that offers its options is answered by one of them, not by a name beside them', async () => {
    const asked = 'Was Harbour Lights or Ilse Varga Studio founded first?';
    expect((await answered(asked, 'Halifax')).abstains).toBe(true);
    // Read as a choice, each option's own date decides it: with the studio's document, an option answers.
    const studio = chunk('c-studio', 'Ilse Varga Studio', 'Ilse Varga Studio is a film studio founded in 2015.');
    const chosen = await synthesized(asked, [
      { focus: 'Was Harbour Lights founded first?', answer: '2011', cited: [film] },
      { focus: 'Was Ilse Varga Studio founded first?', answer: '2015', cited: [studio] },
    ]);
    expect(chosen.abstains).toBe(false);
    expect(chosen.answer).toMatch(/^Harbour Lights/);
    // A remark after the question mark is no part of the last option.
    const remarked = await synthesized(`${asked} (asked again)`, [
      { focus: 'Was Harbour Lights founded first? (asked again)', answer: '2011', cited: [film] },
      { focus: 'Was Ilse Varga Studio founded first? (asked again)', answer: '2015', cited: [studio] },
    ]);
    expect(remarked.abstains).toBe(false);
    expect(remarked.answer).toMatch(/^Harbour Lights/);
    // "first" alone offers nothing to choose from: a name the question does not say answers it.
    expect((await answered('Who first screened the film directed by Ilse Varga?', 'Halifax')).abstains).toBe(false);
  });

  it('answer fit - a name of the kind the question describes, not the kind it asks for, is no answer', async () => {
    const asked = 'The festival that screened Harbour Lights is held in what city?';
    const festival = chunk('c-festival', 'Harbour Lights', 'Harbour Lights was screened at the Halifax Film Festival.');
    expect((await answered(asked, 'Halifax Film Festival', [festival])).abstains).toBe(true);
    expect((await answered(asked, 'Halifax Film Festival', [festival], ['answerFit'])).abstains).toBe(false);
    expect((await answered(asked, 'Halifax', [festival])).abstains).toBe(false);
    // The words after the question word say what is asked: a county answers "what Velmar county".
    expect(
      (
        await answered('The city where Harbour Lights premiered is in what Velmar county?', 'Halifax County', [
          chunk('c-county', 'Halifax', 'Halifax is a city in Halifax County.'),
        ])
      ).abstains,
    ).toBe(false);
    // "known as what from 2001": no noun after the question word says what kind is asked.
    expect(
      (await answered('The film festival was known as what from 2001 to 2005?', 'Halifax Film Festival', [festival]))
        .abstains,
    ).toBe(false);
  });

  it('answer fit - a word the evidence only uses to describe something else ("a Canadian drama film") answers no "who"', async () => {
    expect((await answered('Who directed the film that premiered in Halifax?', 'Canadian')).abstains).toBe(true);
    expect((await answered('What is the name of the sister of Tomas Berg?', 'Ferrand', [restaurant])).abstains).toBe(
      true,
    );
    expect(
      (await answered('Who directed the film that premiered in Halifax?', 'Canadian', [film], ['answerFit'])).abstains,
    ).toBe(false);
  });

  it('answer fit - where the question asks for a description, or the evidence names the answer on its own, it stands', async () => {
    expect((await answered('What is the nationality of the director of Harbour Lights?', 'Hungarian')).abstains).toBe(
      false,
    );
    expect((await answered('Who directed Harbour Lights?', 'Ilse Varga')).abstains).toBe(false);
    expect((await answered('Where did Harbour Lights premiere?', 'Halifax')).abstains).toBe(false);
  });

  it('answer fit - a place is asked: a name the evidence never uses as a place is no answer', async () => {
    const cast = chunk('c-cast', 'Harbour Lights', 'The cast members of Harbour Lights are Ilse Varga and Tomas Berg.');
    expect(
      (await answered('Which country does the lead of Harbour Lights come from?', 'Ilse Varga', [cast])).abstains,
    ).toBe(true);
    expect(
      (await answered('Where is the director of Harbour Lights located?', 'Tomas Berg', [cast], ['answerFit']))
        .abstains,
    ).toBe(false);
    expect((await answered('Where is the director of Harbour Lights located?', 'Tomas Berg', [cast])).abstains).toBe(
      true,
    );
    // After a preposition of place, or named by the kind asked, it is one.
    expect((await answered('Where is Fjord House located?', 'Malmo', [restaurant])).abstains).toBe(false);
    const village = chunk(
      'c-village',
      'Harbour Lights',
      'Harbour Lights was shot in the town of Marrow, Halden County.',
    );
    expect((await answered('What county was Harbour Lights shot in?', 'Halden County', [village])).abstains).toBe(
      false,
    );
  });

  it('answer fit - a kind of place that only describes the noun after it asks for no place ("which country singer")', async () => {
    const cast = chunk('c-cast', 'Harbour Lights', 'The cast members of Harbour Lights are Ilse Varga and Tomas Berg.');
    const fits = async (asked: string) => !(await answered(asked, 'Ilse Varga', [cast])).abstains;
    // Followed by another noun or a possessive, the kind word is a modifier: a person may answer.
    expect(await fits('Which country singer starred in Harbour Lights?')).toBe(true);
    expect(await fits('What state governor produced Harbour Lights?')).toBe(true);
    expect(await fits("Which town's mayor opened Harbour Lights?")).toBe(true);
    expect(await fits('Which Canadian province university trained the lead of Harbour Lights?')).toBe(true);
    // Closed by a function word, a verb, punctuation, or a name after a leading preposition, a place is asked.
    expect(await fits('Which country is the lead of Harbour Lights from?')).toBe(false);
    expect(await fits('Which city hosted Harbour Lights?')).toBe(false);
    expect(await fits('Which city won the right to screen Harbour Lights?')).toBe(false);
    expect(await fits('The lead of Harbour Lights comes from what country?')).toBe(false);
    expect(await fits('In which county Harbour Lights was shot is unclear.')).toBe(false);
    expect(await fits('Which cities screen Harbour Lights?')).toBe(false);
  });

  it('answer fit - "to" puts no place ("married to"): a name only after it is no answer to a place question', async () => {
    const married = chunk('c-married', 'Ilse Varga', 'Ilse Varga was married to Tomas Berg for ten years.');
    expect((await answered('Where did the director of Harbour Lights live?', 'Tomas Berg', [married])).abstains).toBe(
      true,
    );
    const moved = chunk('c-moved', 'Ilse Varga', 'Ilse Varga moved to Malmo and lived in Malmo until 1999.');
    expect((await answered('Where did the director of Harbour Lights live?', 'Malmo', [moved])).abstains).toBe(false);
  });

  it('answer fit - a name that is an attribute of the noun the question asks for names that thing ("which department")', async () => {
    const team = chunk(
      'c-team',
      'Lena Ortiz',
      'Lena Ortiz belongs to the Quality Assurance department of Harbour Lights.',
    );
    expect((await answered('Which department does Lena Ortiz belong to?', 'Quality Assurance', [team])).abstains).toBe(
      false,
    );
    // Of another noun than the one asked, the name still only describes.
    expect((await answered('Who does Lena Ortiz work for?', 'Quality Assurance', [team])).abstains).toBe(true);
  });
});

describe("role-holder dates - a comparison of the options' role-holders is decided on the holders' own documents", () => {
  const asked = 'Which film has the director who is older, Harbour Lights or Quiet Coast?';
  const otherFilm = chunk('c-film-2', 'Quiet Coast', 'Quiet Coast is a 2016 drama film directed by Jon Marsh.');
  const otherDirector = chunk('c-director-2', 'Jon Marsh', 'Jon Marsh (born 9 June 1951) is a Scottish film director.');
  const hops = (second: (typeof otherFilm)[]) => [
    {
      focus: 'Which film has the director who is older, Harbour Lights?',
      answer: 'Ilse Varga',
      cited: [film, director],
    },
    { focus: 'Which film has the director who is older, Quiet Coast?', answer: 'Jon Marsh', cited: second },
  ];

  it("role-holder dates - the film whose director was born first, though the film's own date is later", async () => {
    const written = await synthesized(asked, hops([otherFilm, otherDirector]));
    expect(written.abstains).toBe(false);
    expect(written.answer).toMatch(/^Quiet Coast \[\d\]: 9 June 1951/);
    const byFilms = await synthesized(asked, hops([otherFilm, otherDirector]), ['roleHolderDates']);
    expect(byFilms.answer).toMatch(/^Harbour Lights/);
  });

  it('role-holder dates - a role noun that names the kind of the options compares their own dates', async () => {
    const kind = 'Which director was born first, Ilse Varga or Jon Marsh?';
    const written = await synthesized(kind, [
      { focus: 'Which director was born first, Ilse Varga?', answer: '3 May 1970', cited: [director] },
      { focus: 'Which director was born first, Jon Marsh?', answer: '9 June 1951', cited: [otherDirector] },
    ]);
    expect(written.answer).toMatch(/^Jon Marsh/);
  });

  it("role-holder dates - without a holder's document the answer abstains and names the holder", async () => {
    const written = await synthesized(asked, hops([otherFilm]));
    expect(written.abstains).toBe(true);
    expect(written.answer).toContain('What was not found: a document about "Jon Marsh" that states its date.');
  });

  it('answer fit - a name the evidence calls the kind asked fits, though its head word is a verb of the question ("Works" of "work for")', () => {
    const question = 'Which company does Ada Lund work for?';
    const analyst = chunk('c-analyst', 'Ada Lund', 'Ada Lund is a senior analyst at Kestrel Works.');
    const company = chunk('c-works', 'Kestrel Works', 'Kestrel Works is a shipping company founded in 2001.');
    expect(fitsQuestion(question, 'Kestrel Works', [analyst, company])).toBe(true);
    expect(fitsQuestion(question, 'Kestrel Works', [analyst])).toBe(false);
    expect(namedAsKindAsked(question, [analyst, company])).toEqual({ name: 'Kestrel Works', chunkId: 'c-works' });
    // A pronoun that opens the sentence is no name of the kind.
    const pronoun = chunk('c-it', 'Gull Ferries', 'Gull Ferries runs two boats. It is a shipping company.');
    expect(namedAsKindAsked(question, [pronoun])).toBeUndefined();
  });
});
