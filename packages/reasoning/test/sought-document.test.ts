import { describe, expect, it } from 'vitest';
import type { HopExtractionInput, SynthesisInput } from '../src/index.js';
import { createOfflineReasoner } from '../src/index.js';
import { chunk } from './support/chunks.js';
import { callContext, hopInputs, secondHopOf } from './support/offline-hops.js';

const call = callContext();
const reasoner = createOfflineReasoner();
const without = createOfflineReasoner({ switchedOff: ['soughtDocument'] });

const question = 'Which company employs the wife of Tomas Arvid?';
const painter = chunk(
  'c-painter',
  'Tomas Arvid',
  'Tomas Arvid is a Danish painter. In 2001 he married the architect Mira Solen, and the pair moved to Aarhus.',
);
const architect = chunk(
  'c-architect',
  'Mira Solen',
  'Mira Solen is a Danish architect. Since 2010 she has been employed by Nordvik Studio, a firm in Aarhus.',
);
// A neighbour that names the bridge: not about her, and what it says of a company is not her employer.
const gallery = chunk(
  'c-gallery',
  'Harbour Gallery',
  'The Harbour Gallery in Aarhus shows paintings by Tomas Arvid and Mira Solen. It is run by the company Vestlys Holding, which employs twelve people.',
);

const step = hopInputs(question, [painter]);

async function secondHop(chunks: HopExtractionInput['chunks'], using = reasoner) {
  const first = await using.extractHopAnswer(step({}), call);
  expect(first.bridgeEntities[0]).toBe('Mira Solen');
  return using.extractHopAnswer(step(secondHopOf(question, first, [painter], chunks)), call);
}

describe('sought document - a hop answers from the document about what it was sent to find', () => {
  it("sought document - a later hop with the bridge's own document answers from it", async () => {
    const finding = await secondHop([gallery, architect]);
    expect(finding).toMatchObject({ unknown: false, done: true, answer: 'Nordvik Studio' });
    expect(finding.citedChunkIds[0]).toBe('c-architect');
  });

  it('sought document - a later hop whose titled evidence only mentions the bridge says UNKNOWN, where the switch off answers from the neighbour', async () => {
    const off = await secondHop([gallery, painter], without);
    expect(off).toMatchObject({ unknown: false, done: true });
    const on = await secondHop([gallery, painter]);
    expect(on).toMatchObject({ unknown: true, answer: '' });
  });

  it('sought document - untitled evidence (news, tickets) that mentions the bridge still answers: nothing tells what it is about', async () => {
    const untitled = [{ ...gallery, title: '' }];
    const finding = await secondHop(untitled);
    expect(finding.unknown).toBe(false);
  });

  it('sought document - a sub-question on one option of a comparison reads no date from a neighbour that names the option', async () => {
    const choice = 'Which was founded first, Orchid Labs or Kestrel Data?';
    const focus = 'Which was founded first, Kestrel Data?';
    const spinOff = chunk(
      'c-spin-off',
      'Lark Analytics',
      'Lark Analytics is a company founded in 2011 by former staff of Kestrel Data.',
    );
    const own = chunk('c-kestrel', 'Kestrel Data', 'Kestrel Data is a research company founded in 2009 in Lisbon.');
    const ask = (chunks: HopExtractionInput['chunks'], using = reasoner) =>
      using.extractHopAnswer(
        step({ question: choice, focus, query: focus, expectedHops: 1, hopsLeft: 0, chunks }),
        call,
      );
    expect(await ask([spinOff], without)).toMatchObject({ unknown: false, answer: '2011' });
    expect(await ask([spinOff])).toMatchObject({ unknown: true });
    // With its own document retrieved after the neighbour, the date is the option's own.
    expect(await ask([spinOff, own])).toMatchObject({ unknown: false, answer: '2009' });
  });
});

describe('sought document - the abstention names what was not found', () => {
  async function written(input: SynthesisInput): Promise<string> {
    let text = '';
    for await (const piece of reasoner.synthesize(input, call)) text += piece;
    return text;
  }

  it("sought document - a chain broken at a later hop names the bridge whose document it did not find, not the failed search's words", async () => {
    const first = await reasoner.extractHopAnswer(step({}), call);
    const second = await secondHop([gallery, painter]);
    const text = await written({
      question,
      hops: [
        { hop: 1, focus: question, query: question, finding: first },
        { hop: 2, focus: question, query: first.nextQuery, finding: second },
      ],
      evidence: [{ index: 1, chunk: painter, hop: 1, bridgeEntity: '' }],
      complete: false,
      missing: first.nextQuery,
    });
    expect(text).toMatch(/^I cannot answer/);
    expect(text).toContain('What was found: ');
    expect(text).toContain('What was not found: a document about "Mira Solen".');
  });

  it('sought document - a sub-question that found nothing names its one entity', async () => {
    const asked = 'Which was founded first, Orchid Labs or Kestrel Data?';
    const focus = 'Which was founded first, Kestrel Data?';
    const unknown = { ...(await secondHop([gallery, painter])), unknown: true };
    const text = await written({
      question: asked,
      hops: [{ hop: 1, focus, query: focus, finding: unknown }],
      evidence: [],
      complete: false,
      missing: focus,
    });
    expect(text).toContain('What was not found: a document about "Kestrel Data".');
  });

  it('sought document - an entity whose own document was found but does not state what is asked is named as such, not as unfound', async () => {
    const asked = 'Who founded Kestrel Data?';
    const own = chunk('c-kestrel', 'Kestrel Data', 'Kestrel Data is a research company founded in 2009 in Lisbon.');
    const unknown = { ...(await secondHop([gallery, painter])), unknown: true, answer: '' };
    const text = await written({
      question: asked,
      hops: [{ hop: 1, focus: asked, query: asked, finding: unknown }],
      evidence: [{ index: 1, chunk: own, hop: 1, bridgeEntity: '' }],
      complete: false,
      missing: asked,
    });
    expect(text).toContain(
      'What was not found: a document about "Kestrel Data" that states what the question asks of it.',
    );
  });

  it('sought document - a Chinese question is told what was not found in Chinese', async () => {
    const asked = '青岚科技的负责人毕业于哪所大学？';
    const first = { ...(await secondHop([gallery, architect])), answer: '李明' };
    const broken = { ...first, unknown: true, answer: '' };
    const text = await written({
      question: asked,
      hops: [
        { hop: 1, focus: asked, query: asked, finding: first },
        { hop: 2, focus: asked, query: '李明 毕业', finding: broken },
      ],
      evidence: [],
      complete: false,
      missing: '李明 毕业',
    });
    expect(text).toContain('未找到：关于“李明”的文档。');
  });
});
