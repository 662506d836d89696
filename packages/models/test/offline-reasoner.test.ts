import { Grade } from '@hopline/contracts';
import { describe, expect, it } from 'vitest';
import type { HopExtractionInput, ModelCallContext, PreviousHop, SynthesisInput } from '../src/index.js';
import { createOfflineReasoner, gradeEvidence, UsageMeter } from '../src/index.js';
import { chunk } from './support/chunks.js';

const reasoner = createOfflineReasoner();
const call: ModelCallContext = { deadlineUnixMs: Date.now() + 60_000, signal: new AbortController().signal, usage: new UsageMeter() };

const question = 'Who was married to the star of No Escape?';
const film = chunk('c-film', 'No Escape (1936 film)', 'No Escape is a 1936 British thriller film directed by Norman Lee and starring Valerie Hobson, Leslie Perrins and Robert Cochran.');
const unrelated = chunk('c-other', 'Escape from L.A.', 'Escape from L.A. is a 1996 American action film written by John Carpenter.');
const son = chunk('c-son', 'David Profumo', 'Profumo was born in London, the son of former British government minister John Profumo and his wife, actress Valerie Hobson.');

function hop(overrides: Partial<HopExtractionInput>): HopExtractionInput {
  return { question, focus: question, hop: 1, expectedHops: 2, hopsLeft: 2, query: question, chunks: [film, unrelated], previous: [], ...overrides };
}

async function drain(stream: AsyncIterable<string>): Promise<string> {
  let text = '';
  for await (const piece of stream) text += piece;
  return text;
}

describe('offline reasoner - hop answers', () => {
  it('offline reasoner - the first hop reads the bridge entity next to the relation word and sends the next hop to look it up', async () => {
    const finding = await reasoner.extractHopAnswer(hop({}), call);
    expect(finding).toMatchObject({ answer: 'Valerie Hobson', unknown: false, done: false });
    expect(finding.bridgeEntities[0]).toBe('Valerie Hobson');
    expect(finding.nextQuery).toContain('Valerie Hobson');
    // The relation word the first document did not resolve goes with it, as the question wrote it.
    expect(finding.nextQuery).toContain('married');
    expect(finding.citedChunkIds[0]).toBe('c-film');
  });

  it('offline reasoner - every cited chunk is one of the hop\'s own chunks', async () => {
    const chunks = [film, unrelated];
    const finding = await reasoner.extractHopAnswer(hop({ chunks }), call);
    for (const id of finding.citedChunkIds) expect(chunks.map((c) => c.chunkId)).toContain(id);
  });

  it('offline reasoner - the last expected hop concludes from the document that names the bridge', async () => {
    const first = await reasoner.extractHopAnswer(hop({}), call);
    const previous: PreviousHop[] = [{ query: question, finding: first, cited: [film] }];
    const finding = await reasoner.extractHopAnswer(hop({ hop: 2, query: first.nextQuery, chunks: [son, unrelated], previous }), call);
    expect(finding).toMatchObject({ unknown: false, done: true, answer: 'John Profumo' });
    expect(finding.citedChunkIds).toContain('c-son');
  });

  it('offline reasoner - a later hop whose evidence never mentions the bridge entity says UNKNOWN instead of guessing', async () => {
    const first = await reasoner.extractHopAnswer(hop({}), call);
    const previous: PreviousHop[] = [{ query: question, finding: first, cited: [film] }];
    const finding = await reasoner.extractHopAnswer(hop({ hop: 2, query: first.nextQuery, chunks: [unrelated], previous }), call);
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
    const q = 'When was Valerie Hobson born?';
    const bio = chunk('c-bio', 'Valerie Hobson', 'Valerie Hobson (born 14 April 1917 in Larne) was a British actress.');
    const finding = await reasoner.extractHopAnswer(hop({ question: q, focus: q, query: q, expectedHops: 1, chunks: [bio] }), call);
    expect(finding).toMatchObject({ done: true, answer: '14 April 1917', citedChunkIds: ['c-bio'] });
  });

  it('offline reasoner - a one-hop reading whose evidence leaves a relation word unexplained takes one more hop', async () => {
    const q = 'No Escape is a 1936 film starring an actress born in what year?';
    const finding = await reasoner.extractHopAnswer(hop({ question: q, focus: q, query: q, expectedHops: 1, chunks: [film] }), call);
    expect(finding.done).toBe(false);
    expect(finding.nextQuery).toMatch(/Valerie Hobson/);
    expect(finding.nextQuery).toMatch(/born/);
  });
});

describe('offline reasoner - grading', () => {
  it('offline reasoner - grades evidence by how much of the query the best chunk covers', () => {
    expect(gradeEvidence('No Escape film star', [film])).toBe(Grade.RELEVANT);
    expect(gradeEvidence('No Escape spouse of the lead actress', [film])).toBe(Grade.AMBIGUOUS);
    expect(gradeEvidence('photosynthesis chlorophyll', [film])).toBe(Grade.IRRELEVANT);
    expect(gradeEvidence('anything', [])).toBe(Grade.IRRELEVANT);
  });
});

describe('offline reasoner - synthesis', () => {
  const first = { answer: 'Valerie Hobson', unknown: false, done: false, nextQuery: 'Valerie Hobson married', confidence: 0.7, citedChunkIds: ['c-film'], bridgeEntities: ['Valerie Hobson'] };
  const second = { answer: 'John Profumo', unknown: false, done: true, nextQuery: '', confidence: 0.8, citedChunkIds: ['c-son'], bridgeEntities: ['John Profumo'] };
  const evidence = [
    { index: 1, chunk: film, hop: 1, bridgeEntity: '' },
    { index: 2, chunk: son, hop: 2, bridgeEntity: 'Valerie Hobson' },
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
    expect(text.startsWith('John Profumo [2].')).toBe(true);
    expect(text).toContain('starring Valerie Hobson');
    for (const sentence of text.split(/(?<=\.)\s+/)) expect(sentence).toMatch(/\[\d\]\.$/);
  });

  it('offline reasoner - a broken chain abstains, citing what was found and naming what was not', async () => {
    const input: SynthesisInput = {
      question,
      hops: [{ hop: 1, focus: question, query: question, finding: first }],
      evidence: [evidence[0]!],
      complete: false,
      missing: 'Valerie Hobson married',
    };
    const text = await drain(reasoner.synthesize(input, call));
    expect(text).toMatch(/^I cannot answer/);
    expect(text).toContain('[1]');
    expect(text).toContain('What was not found: Valerie Hobson married.');
  });
});
