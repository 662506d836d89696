import { chineseNames, contentTerms } from '@hopline/text';
import { describe, expect, it } from 'vitest';
import type { PreviousHop, SynthesisInput } from '../src/index.js';
import { createOfflineReasoner } from '../src/index.js';
import { claimOf, claimPhrases, supports } from '../src/offline/claims.js';
import { questionAnchors, relationTerms } from '../src/offline/question.js';
import { states } from '../src/offline/text.js';
import { chunk } from './support/chunks.js';
import { callContext, hopInputs } from './support/offline-hops.js';

const reasoner = createOfflineReasoner();
const call = callContext();

// A project, its owner, and the owner's department: the answer needs the bridge in between.
const question = '星河项目的负责人属于哪个部门？';
const project = chunk(
  'c-project',
  '星河项目',
  '星河项目是南山研究院的检索平台项目，于2029年启动。该项目的负责人是赵磊，他负责制定路线图。',
);
const owner = chunk('c-owner', '赵磊', '赵磊是南山研究院的首席工程师，隶属于基础设施部。他在2025年加入研究院。');
const department = chunk('c-department', '基础设施部', '基础设施部负责南山研究院的计算与存储平台，部门负责人是孙悦。');

const hop = hopInputs(question, [project, department, owner]);

async function drain(stream: AsyncIterable<string>): Promise<string> {
  let text = '';
  for await (const piece of stream) text += piece;
  return text;
}

describe('offline reasoner - Chinese text', () => {
  it('chinese - names come from the tagger and from the phrases that state a relation, never a single character', () => {
    const names = (text: string) => chineseNames(text).map((name) => name.text);
    expect(names('该项目的负责人是赵磊，他负责制定路线图。')).toContain('赵磊');
    expect(names('赵磊隶属于基础设施部。')).toEqual(expect.arrayContaining(['赵磊', '基础设施部']));
    expect(names('这个项目由王小明牵头负责。')).toContain('王小明');
    // A generic noun after a relation word is not a name.
    expect(names('他在2025年加入公司。')).toEqual([]);
    for (const name of chineseNames('赵磊是南山研究院的首席工程师，隶属于基础设施部。'))
      expect([...name.text].length).toBeGreaterThan(1);
  });

  it('chinese - content terms are segmented words and their parts, without function words or character bigrams across words', () => {
    const terms = contentTerms('星河项目的负责人属于哪个部门？');
    expect(terms).toEqual(expect.arrayContaining(['星河', '项目', '负责人', '属于', '部门']));
    expect(terms).not.toContain('哪个');
    expect(terms).not.toContain('人属');
    // "属于" in a question matches "隶属于" in evidence.
    expect(contentTerms('隶属于基础设施部')).toContain('属于');
  });

  it('chinese - the question names its own entity through "的", and asks the relation words after it', () => {
    const anchors = questionAnchors(question);
    expect(anchors).toEqual(['星河项目']);
    expect(relationTerms(question, anchors)).toEqual(['负责人', '属于', '部门']);
  });

  it("chinese - the first hop answers the bridge the relation phrase names, never the question's own entity, and asks only what is left", async () => {
    const finding = await reasoner.extractHopAnswer(hop({}), call);
    expect(finding).toMatchObject({ answer: '赵磊', unknown: false, done: false });
    expect(finding.bridgeEntities).not.toContain('星河项目');
    expect(finding.nextQuery).toBe('赵磊 属于 部门');
    expect(finding.citedChunkIds[0]).toBe('c-project');
  });

  it("chinese - the second hop concludes with the department the bridge's document states", async () => {
    const first = await reasoner.extractHopAnswer(hop({}), call);
    const previous: PreviousHop[] = [{ query: question, finding: first, cited: [project] }];
    const finding = await reasoner.extractHopAnswer(
      hop({ hop: 2, query: first.nextQuery, chunks: [owner, department, project], previous }),
      call,
    );
    expect(finding).toMatchObject({ answer: '基础设施部', unknown: false, done: true });
    expect(finding.citedChunkIds[0]).toBe('c-owner');
  });

  it('chinese - synthesis answers in Chinese, cites the chunk that states the answer, quotes each hop once', async () => {
    const first = await reasoner.extractHopAnswer(hop({}), call);
    const previous: PreviousHop[] = [{ query: question, finding: first, cited: [project] }];
    const second = await reasoner.extractHopAnswer(
      hop({ hop: 2, query: first.nextQuery, chunks: [owner, department, project], previous }),
      call,
    );
    const input: SynthesisInput = {
      question,
      hops: [
        { hop: 1, focus: question, query: question, finding: first },
        // The second hop cites the project first: the answer must still cite the chunk that states it.
        {
          hop: 2,
          focus: question,
          query: first.nextQuery,
          finding: { ...second, citedChunkIds: ['c-project', ...second.citedChunkIds] },
        },
      ],
      evidence: [
        { index: 1, chunk: project, hop: 1, bridgeEntity: '' },
        { index: 2, chunk: owner, hop: 2, bridgeEntity: '赵磊' },
      ],
      complete: true,
      missing: '',
    };
    const text = await drain(reasoner.synthesize(input, call));
    expect(text).toBe(
      '基础设施部 [2]。该项目的负责人是赵磊，他负责制定路线图 [1]。赵磊是南山研究院的首席工程师，隶属于基础设施部 [2]。',
    );
  });

  it('chinese - an answer no evidence states ends in an abstention, in Chinese, saying what was found and what was not', async () => {
    const first = await reasoner.extractHopAnswer(hop({}), call);
    const input: SynthesisInput = {
      question,
      hops: [
        { hop: 1, focus: question, query: question, finding: first },
        {
          hop: 2,
          focus: question,
          query: first.nextQuery,
          finding: { ...first, answer: '基础设施部', done: true, citedChunkIds: ['c-project'] },
        },
      ],
      evidence: [{ index: 1, chunk: project, hop: 1, bridgeEntity: '' }],
      complete: true,
      missing: '',
    };
    const text = await drain(reasoner.synthesize(input, call));
    expect(text).toMatch(/^无法根据知识库回答/);
    expect(text).toContain('已找到：该项目的负责人是赵磊，他负责制定路线图 [1]。');
    expect(text).toContain('未找到：陈述“基础设施部”的文档。');
    expect(text).not.toMatch(/基础设施部 \[1\]/);
  });

  it('chinese - a bare answer phrase is the claim a citation must state; a sentence is checked by its names', () => {
    expect(claimPhrases('基础设施部 ')).toEqual(['基础设施部']);
    expect(claimPhrases('赵磊隶属于基础设施部')).toEqual(expect.arrayContaining(['赵磊', '基础设施部']));
    expect(states(owner.text, '基础设施部')).toBe(true);
    expect(states(project.text, '基础设施部')).toBe(false);
  });

  it('chinese - a short claim that gives a number in digits is checked by the number and its words, not whole: a date comparison the writer joined', () => {
    // "X [a]：2029年3月 [a]，早于Y的 2030 [b]": the last claim joins the template's words to Y's date.
    const claim = claimOf('，早于天穹项目的 2030 ');
    expect(claim.phrases).toEqual(['2030']);
    const source = chunk('c-tq', '天穹项目', '天穹项目是一个数据湖建设项目，于2030年启动。');
    expect(supports([source], claim)).toBe(true);
    expect(supports([source], claimOf('，早于天穹项目的 2031 '))).toBe(false);
    // Without a number, a bare phrase is still the claim whole.
    expect(claimPhrases('基础设施部 ')).toEqual(['基础设施部']);
  });
});
