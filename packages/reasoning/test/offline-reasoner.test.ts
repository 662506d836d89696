import { Grade } from '@hopline/contracts';
import { contentTerms, namedSpans } from '@hopline/text';
import { describe, expect, it } from 'vitest';
import type { HopExtractionInput, PreviousHop, SynthesisInput } from '../src/index.js';
import { createOfflineReasoner } from '../src/index.js';
import { gradeEvidence } from '../src/offline/grade.js';
import { chunk } from './support/chunks.js';
import { callContext, hopInputs, secondHopOf } from './support/offline-hops.js';

const reasoner = createOfflineReasoner();
const call = callContext();

const question = 'Who was married to the star of No Harbour?';
const film = chunk(
  'c-film',
  'No Harbour (1936 film)',
  'No Harbour is a 1936 Velmarian mystery film directed by Osric Vell and starring Mirela Dunstan, Hale Corwin and Ivo Marsh.',
);
const unrelated = chunk(
  'c-other',
  'Harbour from T.K.',
  'Harbour from T.K. is a 1996 American action film written by Edda Lindqvist.',
);
const son = chunk(
  'c-son',
  'Caspar Wrenfield',
  'Wrenfield grew up in Port Ellis, the son of the shipping magnate Tobias Wrenfield and the actress Mirela Dunstan.',
);

const hop = hopInputs(question, [film, unrelated]);

async function drain(stream: AsyncIterable<string>): Promise<string> {
  let text = '';
  for await (const piece of stream) text += piece;
  return text;
}

describe('offline reasoner - hop answers', () => {
  it('offline reasoner - the first hop reads the bridge entity next to the relation word and sends the next hop to look it up', async () => {
    const finding = await reasoner.extractHopAnswer(hop({}), call);
    expect(finding).toMatchObject({ answer: 'Mirela Dunstan', unknown: false, done: false });
    expect(finding.bridgeEntities[0]).toBe('Mirela Dunstan');
    expect(finding.nextQuery).toContain('Mirela Dunstan');
    // The relation word the first document did not resolve goes with it, as the question wrote it.
    expect(finding.nextQuery).toContain('married');
    expect(finding.citedChunkIds[0]).toBe('c-film');
  });

  it("offline reasoner - every cited chunk is one of the hop's own chunks", async () => {
    const chunks = [film, unrelated];
    const finding = await reasoner.extractHopAnswer(hop({ chunks }), call);
    for (const id of finding.citedChunkIds) expect(chunks.map((c) => c.chunkId)).toContain(id);
  });

  it("offline reasoner - the last expected hop concludes from the bridge's own document", async () => {
    const first = await reasoner.extractHopAnswer(hop({}), call);
    const previous: PreviousHop[] = [{ query: question, finding: first, cited: [film] }];
    const actress = chunk(
      'c-actress',
      'Mirela Dunstan',
      'Mirela Dunstan was a British actress. She married the politician Tobias Wrenfield in 1954.',
    );
    const finding = await reasoner.extractHopAnswer(
      hop({ hop: 2, query: first.nextQuery, chunks: [son, actress, unrelated], previous }),
      call,
    );
    expect(finding).toMatchObject({ unknown: false, done: true, answer: 'Tobias Wrenfield' });
    expect(finding.citedChunkIds[0]).toBe('c-actress');
  });

  it('offline reasoner - a document whose title names the entity before a disambiguating comma ("Elm Park, Dunmore") is the document about it, cited first', async () => {
    const asked = 'Who is Elm Park named after?';
    const park = chunk(
      'c-park',
      'Elm Park, Dunmore',
      'Elm Park is a park in Dunmore, named after Horace P. Elm, who gave the land to the city.',
    );
    const other = chunk(
      'c-avenue',
      'Park Terrace',
      'Park Terrace is a street named after the park that once ran along it.',
    );
    const finding = await reasoner.extractHopAnswer(
      hop({ question: asked, focus: asked, query: asked, chunks: [other, unrelated, park] }),
      call,
    );
    expect(finding.citedChunkIds[0]).toBe('c-park');
  });

  it('offline reasoner - a later hop whose evidence never mentions the bridge entity says UNKNOWN instead of guessing', async () => {
    const first = await reasoner.extractHopAnswer(hop({}), call);
    const previous: PreviousHop[] = [{ query: question, finding: first, cited: [film] }];
    const finding = await reasoner.extractHopAnswer(
      hop({ hop: 2, query: first.nextQuery, chunks: [unrelated], previous }),
      call,
    );
    expect(finding).toMatchObject({ unknown: true, answer: '', nextQuery: '', bridgeEntities: [] });
  });

  it('offline reasoner - evidence that shares no word with the query is UNKNOWN', async () => {
    const nothing = chunk('c-x', 'Photosynthesis', 'Plants convert light into chemical energy.');
    const finding = await reasoner.extractHopAnswer(hop({ chunks: [nothing] }), call);
    expect(finding.unknown).toBe(true);
  });

  it('offline reasoner - no evidence at all is UNKNOWN', async () => {
    expect((await reasoner.extractHopAnswer(hop({ chunks: [] }), call)).unknown).toBe(true);
  });

  it('offline reasoner - a "when" question concludes with the date its evidence gives', async () => {
    const q = 'When was Mirela Dunstan born?';
    const bio = chunk(
      'c-bio',
      'Mirela Dunstan',
      'Mirela Dunstan (born 14 April 1917 in Tenbury) was a British actress.',
    );
    const finding = await reasoner.extractHopAnswer(
      hop({ question: q, focus: q, query: q, expectedHops: 1, chunks: [bio] }),
      call,
    );
    expect(finding).toMatchObject({ done: true, answer: '14 April 1917', citedChunkIds: ['c-bio'] });
  });

  it('offline reasoner - a one-hop reading whose evidence leaves a relation word unexplained takes one more hop', async () => {
    const q = 'No Harbour is a 1936 film starring an actress born in what year?';
    const finding = await reasoner.extractHopAnswer(
      hop({ question: q, focus: q, query: q, expectedHops: 1, chunks: [film] }),
      call,
    );
    expect(finding.done).toBe(false);
    expect(finding.nextQuery).toMatch(/Mirela Dunstan/);
    expect(finding.nextQuery).toMatch(/born/);
  });

  it('offline reasoner - a comparison of the times of the things a question joins hides no bridge, in English or Chinese', async () => {
    // Read as one lookup (the analysis could not split it), its words of comparison are asked
    // of the dates and stated by no document: no name read near them is a bridge to follow.
    const english = 'Did No Harbour and the crime film of Edda Lindqvist come out in the same year?';
    const film1996 = chunk(
      'c-1996',
      '',
      'Harbour from T.K. is a 1996 American action film written by Edda Lindqvist and starring Bram Tolliver.',
    );
    const chinese = '星河项目启动和赵磊加入研究院是在同一个月吗？';
    const project = chunk('c-project', '', '2029年3月，南山研究院启动星河项目，由首席工程师赵磊牵头，孙悦协助。');
    const joined = [
      { q: english, chunks: [film, film1996] },
      { q: chinese, chunks: [project] },
    ];
    for (const { q, chunks } of joined) {
      const finding = await reasoner.extractHopAnswer(
        hop({ question: q, focus: q, query: q, expectedHops: 1, hopsLeft: 2, chunks }),
        call,
      );
      expect(finding.done).toBe(true);
      expect(finding.nextQuery).toBe('');
    }
  });
});

describe('offline reasoner - names that describe rather than refer', () => {
  const film1981 = chunk(
    'c-lights',
    'Harbor Lights',
    'Harbor Lights is a 1981 Norwegian drama film directed by Ines Varga and produced by Tor Holm.',
  );
  const director = chunk(
    'c-varga',
    'Ines Varga',
    'Ines Varga (3 March 1930 – 9 October 2009) was a Norwegian film director. She studied in Bergen.',
  );

  it('offline reasoner - a name inside an indefinite noun phrase ("a 1981 Norwegian drama film") is no bridge: the next hop looks up the role-holder', async () => {
    const q = 'Whom did the director of Harbor Lights marry?';
    const finding = await reasoner.extractHopAnswer(hop({ question: q, focus: q, query: q, chunks: [film1981] }), call);
    expect(finding.answer).toBe('Ines Varga');
    expect(finding.bridgeEntities).not.toContain('Norwegian');
  });

  it('offline reasoner - the names and numbers in the parenthesis after the subject ("(KV 12, T. 9)") and a lone capital are no bridges', async () => {
    const q = 'What nationality was the composer of Nocturne in G minor?';
    const piece = chunk(
      'c-nocturne',
      'Nocturne in G minor (Lind)',
      'Nocturne in G minor (KV 12, T. 9, LW 40) is a piano piece in G minor by Ada Lind.',
    );
    const finding = await reasoner.extractHopAnswer(hop({ question: q, focus: q, query: q, chunks: [piece] }), call);
    expect(finding.answer).toBe('Ada Lind');
    expect(finding.bridgeEntities).toEqual(['Ada Lind']);
  });

  it('offline reasoner - the concluding hop still reads such a name as the answer ("a Norwegian film director" answers a nationality)', async () => {
    const q = 'What nationality was the director of Harbor Lights?';
    const first = await reasoner.extractHopAnswer(hop({ question: q, focus: q, query: q, chunks: [film1981] }), call);
    const finding = await reasoner.extractHopAnswer(
      hop({ question: q, focus: q, ...secondHopOf(q, first, [film1981], [director, film1981]) }),
      call,
    );
    expect(finding).toMatchObject({ done: true, answer: 'Norwegian' });
  });

  it('offline reasoner - "the date of death" asks for a date, read from the end of the span of a life', async () => {
    const q = 'What is the date of death of the director of Harbor Lights?';
    const first = await reasoner.extractHopAnswer(hop({ question: q, focus: q, query: q, chunks: [film1981] }), call);
    const finding = await reasoner.extractHopAnswer(
      hop({ question: q, focus: q, ...secondHopOf(q, first, [film1981], [director, film1981]) }),
      call,
    );
    expect(finding).toMatchObject({ done: true, answer: '9 October 2009', citedChunkIds: ['c-varga'] });
  });
});

describe('offline reasoner - next queries', () => {
  const q = 'How many titles did the coach of the team that won the 2040 River Cup win as a player?';
  const cup = chunk(
    'c-cup',
    '2040 River Cup',
    'The 2040 River Cup was won by the Harbor Seals, who beat the Stone Owls 2–0 in the final in Nantes.',
  );
  const seals = chunk(
    'c-seals',
    'Harbor Seals',
    'The Harbor Seals are a football club founded in 1990. Since 2035 the team has been coached by Ivo Marin.',
  );
  const owls = chunk(
    'c-owls',
    'Stone Owls',
    'The Stone Owls are a football club founded in 1950. Their current coach is Lena Park.',
  );
  const step = (overrides: Partial<HopExtractionInput>) =>
    hop({ question: q, focus: q, query: q, expectedHops: 3, hopsLeft: 2, ...overrides });

  it('offline reasoner - a score after a name is not part of the bridge', async () => {
    const finding = await reasoner.extractHopAnswer(step({ chunks: [cup, owls, seals] }), call);
    expect(finding.answer).toBe('Harbor Seals');
    expect(finding.bridgeEntities).toContain('Stone Owls');
    expect(finding.bridgeEntities.join(' ')).not.toMatch(/2–0/);
  });

  it('offline reasoner - the answer is the name beside the relation, not another name of the chunk whose document was retrieved', async () => {
    // The Stone Owls' document was retrieved and the Harbor Seals' was not: that is no sign of the winner.
    const won = 'Who won the 2040 River Cup?';
    const finding = await reasoner.extractHopAnswer(
      hop({ question: won, focus: won, query: won, expectedHops: 1, hopsLeft: 0, chunks: [cup, owls] }),
      call,
    );
    expect(finding).toMatchObject({ done: true, answer: 'Harbor Seals' });
  });

  it("offline reasoner - the next query names the bridge the best lead's document gives, not the names of a runner-up's document", async () => {
    const first = await reasoner.extractHopAnswer(step({ chunks: [cup, owls, seals] }), call);
    const previous: PreviousHop[] = [{ query: q, finding: first, cited: [cup] }];
    const second = await reasoner.extractHopAnswer(
      step({ hop: 2, hopsLeft: 1, query: first.nextQuery, chunks: [seals, owls], previous }),
      call,
    );
    expect(second.answer).toBe('Ivo Marin');
    expect(second.nextQuery).toMatch(/^Ivo Marin\b/);
    expect(second.nextQuery).not.toContain('Lena Park');
  });

  it("offline reasoner - a sub-question on one option of a date comparison reads that option's date, not another name", async () => {
    const choice = 'Which was founded first, Orchid Labs or Kestrel Data?';
    const orchid = chunk('c-orchid', 'Orchid Labs', 'Orchid Labs is a software company founded in 2014 in Oslo.');
    const kestrel = chunk('c-kestrel', 'Kestrel Data', 'Kestrel Data is a research company founded in 2009 in Lisbon.');
    const focus = 'Which was founded first, Orchid Labs?';
    const finding = await reasoner.extractHopAnswer(
      hop({ question: choice, focus, query: focus, expectedHops: 1, hopsLeft: 0, chunks: [orchid, kestrel] }),
      call,
    );
    expect(finding).toMatchObject({ answer: '2014', done: true });
    expect(finding.citedChunkIds[0]).toBe('c-orchid');
  });
});

describe('offline reasoner - names outside ASCII', () => {
  it('offline reasoner - an option whose name has letters outside ASCII ("Dança Müller") is found in its own document and dated', async () => {
    const choice = 'Which was founded first, Dança Müller or Kestrel Data?';
    const focus = 'Which was founded first, Dança Müller?';
    const troupe = chunk('c-troupe', 'Dança Müller', 'Dança Müller is a dance company founded in 1978 in Porto.');
    const finding = await reasoner.extractHopAnswer(
      hop({ question: choice, focus, query: focus, expectedHops: 1, hopsLeft: 0, chunks: [troupe] }),
      call,
    );
    expect(finding).toMatchObject({ answer: '1978', done: true, unknown: false });
  });
});

describe('offline reasoner - reading names', () => {
  it('offline reasoner - a participle that opens a sentence ("Founded in 1855, …") is not a name', () => {
    const spans = namedSpans(
      'Founded in 1855, Velmar State is a public university. Born in Oslo, she moved to Lisbon.',
    ).map((span) => span.text);
    expect(spans).toEqual(['Velmar State', 'Oslo', 'Lisbon']);
  });

  it("offline reasoner - a sub-question that finds an option's role-holder for a date comparison reads the role-holder, not a date", async () => {
    const choice = 'Which film has the director born later, Quiet Harbor or Night Ferry?';
    const focus = 'Which film has the director born later, Quiet Harbor?';
    const film = chunk('c-harbor', 'Quiet Harbor', 'Quiet Harbor is a 1998 drama film directed by Paul Quinn.');
    const finding = await reasoner.extractHopAnswer(
      hop({ question: choice, focus, query: focus, expectedHops: 1, hopsLeft: 0, chunks: [film] }),
      call,
    );
    expect(finding.answer).toBe('Paul Quinn');
  });
});

describe('offline reasoner - content terms', () => {
  it('offline reasoner - content terms leave out the stop words the index leaves out ("same", "between")', () => {
    expect(contentTerms('Are both from the same country, between the wars?')).toEqual(['country', 'war']);
  });

  it('offline reasoner - content terms make plurals singular as the index stemmer does ("cities" → "city")', () => {
    expect(contentTerms('The cities and churches of Tennis County')).toEqual(['city', 'church', 'tennis', 'county']);
  });
});

describe('offline reasoner - grading', () => {
  it('offline reasoner - grades evidence by how much of the query the best chunk covers', () => {
    expect(gradeEvidence('No Harbour film star', [film])).toBe(Grade.RELEVANT);
    expect(gradeEvidence('No Harbour spouse of the lead actress', [film])).toBe(Grade.AMBIGUOUS);
    expect(gradeEvidence('photosynthesis chlorophyll', [film])).toBe(Grade.IRRELEVANT);
    expect(gradeEvidence('anything', [])).toBe(Grade.IRRELEVANT);
  });
});

describe('offline reasoner - synthesis', () => {
  const first = {
    answer: 'Mirela Dunstan',
    unknown: false,
    done: false,
    nextQuery: 'Mirela Dunstan married',
    confidence: 0.7,
    citedChunkIds: ['c-film'],
    bridgeEntities: ['Mirela Dunstan'],
  };
  const second = {
    answer: 'Tobias Wrenfield',
    unknown: false,
    done: true,
    nextQuery: '',
    confidence: 0.8,
    citedChunkIds: ['c-son'],
    bridgeEntities: ['Tobias Wrenfield'],
  };
  const evidence = [
    { index: 1, chunk: film, hop: 1, bridgeEntity: '' },
    { index: 2, chunk: son, hop: 2, bridgeEntity: 'Mirela Dunstan' },
  ];

  it('offline reasoner - a complete chain is answered first, and every sentence cites the evidence it quotes', async () => {
    const input: SynthesisInput = {
      question,
      hops: [
        { hop: 1, focus: question, query: question, finding: first },
        { hop: 2, focus: question, query: first.nextQuery, finding: second },
      ],
      evidence,
      complete: true,
      missing: '',
    };
    const text = await drain(reasoner.synthesize(input, call));
    expect(text.startsWith('Tobias Wrenfield [2].')).toBe(true);
    expect(text).toContain('starring Mirela Dunstan');
    for (const sentence of text.split(/(?<=\.)\s+/)) expect(sentence).toMatch(/\[\d\]\.$/);
  });

  it('offline reasoner - the answer cites the chunk that states it, though the hop cited another first', async () => {
    const input: SynthesisInput = {
      question,
      hops: [
        { hop: 1, focus: question, query: question, finding: first },
        { hop: 2, focus: question, query: first.nextQuery, finding: { ...second, citedChunkIds: ['c-film', 'c-son'] } },
      ],
      evidence,
      complete: true,
      missing: '',
    };
    const text = await drain(reasoner.synthesize(input, call));
    expect(text.startsWith('Tobias Wrenfield [2].')).toBe(true);
  });

  it("offline reasoner - a sentence that states two hops' answers is quoted once", async () => {
    const input: SynthesisInput = {
      question,
      hops: [
        { hop: 1, focus: question, query: question, finding: { ...first, citedChunkIds: ['c-son'] } },
        { hop: 2, focus: question, query: first.nextQuery, finding: second },
      ],
      evidence: [evidence[1]!],
      complete: true,
      missing: '',
    };
    const text = await drain(reasoner.synthesize(input, call));
    expect(text).toBe(`Tobias Wrenfield [2]. ${son.text.replace(/\.$/, '')} [2].`);
  });

  it('offline reasoner - a final answer no evidence states is not cited: the answer abstains and says so', async () => {
    const input: SynthesisInput = {
      question,
      hops: [
        { hop: 1, focus: question, query: question, finding: first },
        {
          hop: 2,
          focus: question,
          query: first.nextQuery,
          finding: { ...second, answer: 'Silas Orme', citedChunkIds: ['c-son'] },
        },
      ],
      evidence,
      complete: true,
      missing: '',
    };
    const text = await drain(reasoner.synthesize(input, call));
    expect(text).toMatch(/^I cannot answer/);
    expect(text).toContain('What was not found: a document that states "Silas Orme".');
    expect(text).not.toMatch(/Silas Orme \[\d\]/);
  });

  it("offline reasoner - a date comparison answers with the option and cites the chunk stating each option's date", async () => {
    const choice = 'Which was founded first, Orchid Labs or Kestrel Data?';
    const orchid = chunk('c-orchid', 'Orchid Labs', 'Orchid Labs is a software company founded in 2014 in Oslo.');
    const kestrel = chunk('c-kestrel', 'Kestrel Data', 'Kestrel Data is a research company founded in 2009 in Lisbon.');
    const dated = (answer: string, chunkId: string) => ({
      answer,
      unknown: false,
      done: true,
      nextQuery: '',
      confidence: 0.8,
      citedChunkIds: [chunkId],
      bridgeEntities: [answer],
    });
    const input: SynthesisInput = {
      question: choice,
      hops: [
        {
          hop: 1,
          focus: 'Which was founded first, Orchid Labs?',
          query: 'Orchid Labs founded',
          finding: dated('2014', 'c-orchid'),
        },
        {
          hop: 2,
          focus: 'Which was founded first, Kestrel Data?',
          query: 'Kestrel Data founded',
          finding: dated('2009', 'c-kestrel'),
        },
      ],
      evidence: [
        { index: 1, chunk: orchid, hop: 1, bridgeEntity: '' },
        { index: 2, chunk: kestrel, hop: 2, bridgeEntity: '' },
      ],
      complete: true,
      missing: '',
    };
    const text = await drain(reasoner.synthesize(input, call));
    expect(text.startsWith('Kestrel Data [2]: 2009 [2], before Orchid Labs, 2014 [1].')).toBe(true);
  });

  it('offline reasoner - a broken chain abstains, citing what was found and naming what was not', async () => {
    const input: SynthesisInput = {
      question,
      hops: [{ hop: 1, focus: question, query: question, finding: first }],
      evidence: [evidence[0]!],
      complete: false,
      missing: 'Mirela Dunstan married',
    };
    const text = await drain(reasoner.synthesize(input, call));
    expect(text).toMatch(/^I cannot answer/);
    expect(text).toContain('[1]');
    expect(text).toContain('What was not found: Mirela Dunstan married.');
  });
});
