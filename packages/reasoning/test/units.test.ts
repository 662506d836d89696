import type { Chunk__Output } from '@hopline/contracts';
import { Grade, StopReason } from '@hopline/contracts';
import { describe, expect, it } from 'vitest';
import { chunk } from './support/chunks.js';
import { writeAnswer } from '../src/loop/answer-writer.js';
import { rankedAtStop } from '../src/loop/chain.js';
import {
  bestStandsOut,
  fuseRankedLists,
  interleaveCitations,
  ownChunksFirst,
  selectEvidence,
  shareRankedLists,
  splitByOwnWords,
} from '../src/loop/evidence.js';
import type { HopOutcome } from '../src/loop/hop.js';
import { planLayers } from '../src/loop/plan.js';

async function* deltas(...pieces: string[]): AsyncGenerator<string> {
  for (const piece of pieces) yield piece;
}

const capital = chunk('capital', 'Paris', 'Paris is the capital of France.');
const seine = chunk('seine', 'Seine', 'The Seine flows through Paris.');
const rate = chunk('rate', 'Inflation', 'The rate was 3.5 percent in 2021.');
const tianqiong = chunk('tianqiong', '天穹项目', '天穹项目是北风实验室的数据湖建设项目。该项目的负责人是李明。');
const liMing = chunk('li-ming', '李明', '李明是北风实验室的资深架构师，隶属于数据平台部。');

async function written(evidence: Record<number, Chunk__Output>, ...pieces: string[]) {
  const sent: string[] = [];
  const result = await writeAnswer(
    deltas(...pieces),
    new Map(Object.entries(evidence).map(([n, item]) => [Number(n), item])),
    async (text) => {
      sent.push(text);
    },
  );
  return { ...result, sent };
}

describe('answer writer - citation check while streaming', () => {
  it('answer writer - sends whole sentences as they complete, citations and all', async () => {
    const result = await written({ 1: capital, 2: seine }, 'Paris is the cap', 'ital [1]. It lies on the Seine [2].');
    expect(result.sent).toEqual(['Paris is the capital [1].', ' It lies on the Seine [2].']);
    expect(result).toMatchObject({
      text: 'Paris is the capital [1]. It lies on the Seine [2].',
      cited: [1, 2],
      rejected: [],
      droppedSentences: 0,
      recited: 0,
    });
  });

  it('answer writer - a sentence whose only citation names no evidence is dropped; a wrong number beside a right one is removed', async () => {
    const result = await written(
      { 1: capital },
      'Paris is the capital [1]. It has 90 million people [4]. It is in France [1][5].',
    );
    expect(result.text).toBe('Paris is the capital [1]. It is in France [1].');
    expect(result).toMatchObject({ rejected: [4, 5], droppedSentences: 1, cited: [1] });
  });

  it('answer writer - a claim whose only citation names no evidence is checked as an uncited one, beside a valid citation', async () => {
    const unstated = await written(
      { 1: capital },
      'Berlin is the capital of Spain [9], and Paris is the capital of France [1].',
    );
    expect(unstated.text).toBe('');
    expect(unstated.unsupportedSentences).toBe(1);
    const stated = await written(
      { 1: capital, 2: seine },
      'The Seine flows through Paris [9], the capital of France [1].',
    );
    expect(stated.text).toBe('The Seine flows through Paris [2], the capital of France [1].');
  });

  it('answer writer - framing without citations passes; a decimal split across deltas is not cut', async () => {
    const result = await written({ 1: rate }, 'I cannot say. The rate was 3.', '5 percent [1].');
    expect(result.text).toBe('I cannot say. The rate was 3.5 percent [1].');
  });

  it('answer writer - a yes-or-no verdict is a judgement no chunk states: it passes with its citation, as "no" does', async () => {
    const yes = await written({ 1: capital }, 'yes [1]. Paris is the capital of France [1].');
    expect(yes.text).toBe('yes [1]. Paris is the capital of France [1].');
    expect((await written({ 1: capital }, 'no [1].')).text).toBe('no [1].');
  });

  it('answer writer - "[1, 2]" lists are checked number by number', async () => {
    const result = await written({ 2: seine }, 'The Seine flows through Paris [1, 2].');
    expect(result.text).toBe('The Seine flows through Paris [2].');
  });

  it('answer writer - a claim its citation does not state is cited to the chunk that states it', async () => {
    const chinese = await written({ 1: tianqiong, 2: liMing }, '数据平台部 [1]。');
    expect(chinese.text).toBe('数据平台部 [2]。');
    expect(chinese).toMatchObject({ cited: [2], recited: 1 });
    const english = await written({ 1: capital, 2: seine }, 'The Seine flows through Paris [1].');
    expect(english.text).toBe('The Seine flows through Paris [2].');
  });

  it('answer writer - a citation beside one that states the claim, but stating nothing of it, is removed', async () => {
    const result = await written({ 1: capital, 2: liMing }, '李明隶属于数据平台部 [1][2]。');
    expect(result.text).toBe('李明隶属于数据平台部 [2]。');
    // Each cited chunk stating a part of the claim stays.
    expect((await written({ 1: tianqiong, 2: liMing }, '李明隶属于数据平台部 [1, 2]。')).text).toBe(
      '李明隶属于数据平台部 [1][2]。',
    );
  });

  it('answer writer - each claim of a sentence is checked against its own citations', async () => {
    const result = await written({ 1: capital, 2: rate }, 'Paris [1]: 3.5 percent [2].');
    expect(result).toMatchObject({ text: 'Paris [1]: 3.5 percent [2].', recited: 0 });
  });

  it('answer writer - a sentence whose claim no evidence states is not sent', async () => {
    const result = await written(
      { 1: capital, 2: seine },
      'Paris is the capital [1]. Lyon is larger than Marseille [1].',
    );
    expect(result).toMatchObject({ text: 'Paris is the capital [1].', unsupportedSentences: 1, cited: [1] });
  });

  it('answer writer - a sentence already said is not sent again', async () => {
    const result = await written({ 1: tianqiong }, '该项目的负责人是李明 [1]。', '该项目的负责人是李明 [1]。');
    expect(result).toMatchObject({ text: '该项目的负责人是李明 [1]。', repeatedSentences: 1 });
  });

  it('answer writer - an uncited sentence is checked like a cited one: cited to the chunk that states it, or not sent', async () => {
    const result = await written(
      { 1: capital, 2: seine },
      'Paris is the capital [1]. The Seine flows through Paris. Its mayor founded the Louvre in 1793.',
    );
    expect(result).toMatchObject({
      text: 'Paris is the capital [1]. The Seine flows through Paris [2].',
      uncitedCited: 1,
      unsupportedSentences: 1,
      cited: [1, 2],
    });
  });

  it('answer writer - a tail after the last citation is a claim too', async () => {
    const result = await written({ 1: capital }, 'Paris is the capital [1] and has 90 million people.');
    expect(result).toMatchObject({ text: '', unsupportedSentences: 1 });
  });

  it('answer writer - content words count in Chinese as in English: a sentence about something else is not sent', async () => {
    const result = await written({ 1: tianqiong, 2: liMing }, '李明隶属于数据平台部 [2]。李明的预算是一千万欧元 [2]。');
    expect(result).toMatchObject({ text: '李明隶属于数据平台部 [2]。', unsupportedSentences: 1 });
  });

  it("answer writer - trusted framing (the offline reasoner's templates) passes uncited", async () => {
    const result = await writeAnswer(
      deltas('What was not found: the owner of Atlas.'),
      new Map([[1, capital]]),
      async () => {},
      {
        uncited: 'trusted',
      },
    );
    expect(result.text).toBe('What was not found: the owner of Atlas.');
  });

  it('answer writer - when the deltas fail, the sentences already checked stay and the unfinished one is not sent', async () => {
    async function* cut(): AsyncGenerator<string> {
      yield 'Paris is the capital [1]. It lies on the Se';
      throw new Error('stream cut');
    }
    const sent: string[] = [];
    const result = await writeAnswer(
      cut(),
      new Map([
        [1, capital],
        [2, seine],
      ]),
      async (text) => {
        sent.push(text);
      },
    );
    expect(sent).toEqual(['Paris is the capital [1].']);
    expect(result.text).toBe('Paris is the capital [1].');
    expect(result.interruption?.message).toBe('stream cut');
  });
});

describe('final evidence', () => {
  const a = chunk('a', 'A', 'alpha');
  const b = chunk('b', 'B', 'beta');
  const c = chunk('c', 'C', 'gamma');
  const d = chunk('d', 'D', 'delta');

  it("evidence - key evidence takes every hop's first citation before any hop's second", () => {
    expect(interleaveCitations([[a, b], [c], [d]]).map((x) => x.chunkId)).toEqual(['a', 'c', 'd', 'b']);
  });

  it('evidence - ranked lists fuse by reciprocal rank: what several lists rank well comes first', () => {
    expect(
      fuseRankedLists([
        [a, b, c],
        [b, d],
      ]).map((x) => x.chunkId),
    ).toEqual(['b', 'a', 'd', 'c']);
  });

  it('evidence - chunks of two knowledge bases that share a chunk id stay two when lists fuse', () => {
    const hr = { ...chunk('handbook#0', 'Handbook', 'Leave is booked in the HR portal.'), kbId: 'hr' };
    const itDesk = { ...chunk('handbook#0', 'Handbook', 'Laptops are ordered through the IT desk.'), kbId: 'it' };
    expect(fuseRankedLists([[hr], [itDesk]]).map((x) => x.kbId)).toEqual(['hr', 'it']);
  });

  it("evidence - shared rankings give each list its turn at every rank: what all lists rank middling does not push one list's own first out", () => {
    // RRF puts b (second in both) first and a third; shares keep each list's own first on top.
    const lists = [
      [a, b, c],
      [d, b, c],
    ];
    expect(fuseRankedLists(lists).map((x) => x.chunkId)).toEqual(['b', 'c', 'a', 'd']);
    expect(shareRankedLists(lists).map((x) => x.chunkId)).toEqual(['a', 'd', 'b', 'c']);
    expect(shareRankedLists([[a], [], [b, c]]).map((x) => x.chunkId)).toEqual(['a', 'b', 'c']);
  });

  it("evidence - a decided list takes every other turn after its first: the undecided focus's lower chunks move up", () => {
    const e = chunk('e', 'E', 'epsilon');
    const f = chunk('f', 'F', 'zeta');
    const lists = [
      [a, b, c],
      [d, e, f],
    ];
    expect(shareRankedLists(lists, [false, false]).map((x) => x.chunkId)).toEqual(['a', 'd', 'b', 'e', 'c', 'f']);
    // The second focus is decided: after its first, the first focus gets two turns to its one.
    expect(shareRankedLists(lists, [false, true]).map((x) => x.chunkId)).toEqual(['a', 'd', 'b', 'c', 'e', 'f']);
  });

  it("evidence - a focus's chunks that state only the words every sub-question shares are apart from those that state its own", () => {
    const fair = chunk('fair', '', '2031年6月，澜沧市举办图书展览，召开读书论坛。');
    const liuTalk = chunk('liu-talk', '', '2031年6月3日，柳文川在青川出席座谈会并发表讲话。');
    const beifeng = chunk('beifeng', '', '2031年6月9日，北岭集团召开新品推介会，推出新款芯片。');
    const ids = (chunks: readonly Chunk__Output[] | undefined) => chunks?.map((x) => x.chunkId);
    const [liu, bei] = splitByOwnWords(
      [
        [fair, liuTalk],
        [fair, beifeng],
      ],
      ['2031年6月柳文川参加了展览与论坛', '2031年6月北岭集团参加了展览与论坛'],
    );
    // The fair matches the setting and the predicate of both and names neither party.
    expect([ids(liu?.own), ids(liu?.other)]).toEqual([['liu-talk'], ['fair']]);
    expect([ids(bei?.own), ids(bei?.other)]).toEqual([['beifeng'], ['fair']]);
    // Sub-questions that share nothing: every word of a focus is its own.
    const [apart] = splitByOwnWords([[beifeng, liuTalk], [beifeng]], ['柳文川出席座谈会', '北岭集团召开推介会']);
    expect([ids(apart?.own), ids(apart?.other)]).toEqual([['liu-talk'], ['beifeng']]);
    // One focus alone has no words apart from the others': its whole ranking is its own.
    const [alone] = splitByOwnWords([[beifeng, liuTalk]], ['柳文川出席座谈会']);
    expect([ids(alone?.own), ids(alone?.other)]).toEqual([['beifeng', 'liu-talk'], []]);
  });

  it("evidence - own chunks first: every focus's own, then the others, a chunk one focus owns and another does not once, in its own place", () => {
    const [a, b, c, d] = ['a', 'b', 'c', 'd'].map((id) => chunk(id, id, id));
    if (!a || !b || !c || !d) throw new Error('four chunks');
    const split = [
      { own: [a, b], other: [d] },
      { own: [c], other: [b] },
    ];
    expect(ownChunksFirst(split, (lists) => shareRankedLists(lists)).map((x) => x.chunkId)).toEqual([
      'a',
      'c',
      'b',
      'd',
    ]);
  });

  it("evidence - a ranking's best chunk stands out when its reranked score is at least twice the runner-up's", () => {
    const scored = (id: string, rerank?: number): Chunk__Output => ({
      ...chunk(id, id, id),
      ...(rerank === undefined ? {} : { scores: { rerank } }),
    });
    expect(bestStandsOut([scored('a', 6), scored('b', 1.8)])).toBe(true);
    expect(bestStandsOut([scored('a', 2.2), scored('b', 2.1)])).toBe(false);
    // Unscored (the reranker fell back) or negative logits: nothing stands out.
    expect(bestStandsOut([scored('a'), scored('b')])).toBe(false);
    expect(bestStandsOut([scored('a', 1), scored('b', -3)])).toBe(false);
    expect(bestStandsOut([scored('a', 1)])).toBe(true);
  });

  it("evidence - key evidence first, then the last hop's ranked chunks, deduped and capped", () => {
    const picked = selectEvidence([c, a], [a, b, d], 'q', { maxChunks: 3, tokenBudget: 1_000 });
    expect(picked.map((x) => x.chunkId)).toEqual(['c', 'a', 'b']);
  });

  const hopOf = (hop: number, ranked: Chunk__Output[], unknown: boolean): HopOutcome => ({
    hop,
    query: `query ${hop}`,
    ranked,
    cited: ranked.slice(0, 1),
    finding: {
      answer: unknown ? '' : 'X',
      unknown,
      done: !unknown,
      nextQuery: '',
      confidence: 0.5,
      citedChunkIds: [],
      bridgeEntities: [],
    },
    grade: Grade.RELEVANT,
    newChunks: ranked.length,
  });

  it("evidence - a chain that stops UNKNOWN after a later hop hands on that hop's ranking fused with the hop before it", () => {
    const ranked = rankedAtStop([hopOf(1, [a, b], false), hopOf(2, [c, d], true)], StopReason.UNKNOWN);
    expect(ranked.map((x) => x.chunkId)).toEqual(['a', 'c', 'b', 'd']);
  });

  it("evidence - a chain past the hops its analysis planned hands on the last planned hop's ranking fused with the later hops'", () => {
    const hops = [hopOf(1, [a, b], false), hopOf(2, [c, d], false)];
    expect(rankedAtStop(hops, StopReason.SUFFICIENT, { plannedHops: 1 }).map((x) => x.chunkId)).toEqual([
      'a',
      'c',
      'b',
      'd',
    ]);
    // Switched off (unplannedFusion), the unplanned hop's ranking stands alone.
    const alone = rankedAtStop(hops, StopReason.SUFFICIENT, { plannedHops: 1, fuseUnplanned: false });
    expect(alone.map((x) => x.chunkId)).toEqual(['c', 'd']);
    // Every hop planned: the last one's ranking.
    expect(rankedAtStop(hops, StopReason.SUFFICIENT, { plannedHops: 2 }).map((x) => x.chunkId)).toEqual(['c', 'd']);
  });

  it("evidence - any other stop, or an UNKNOWN first hop, hands on the last hop's ranking alone", () => {
    expect(
      rankedAtStop([hopOf(1, [a, b], false), hopOf(2, [c, d], false)], StopReason.SUFFICIENT).map((x) => x.chunkId),
    ).toEqual(['c', 'd']);
    expect(
      rankedAtStop([hopOf(1, [a, b], false), hopOf(2, [c, d], false)], StopReason.MAX_HOPS).map((x) => x.chunkId),
    ).toEqual(['c', 'd']);
    expect(rankedAtStop([hopOf(1, [a, b], true)], StopReason.UNKNOWN).map((x) => x.chunkId)).toEqual(['a', 'b']);
    expect(rankedAtStop([], StopReason.DEADLINE)).toEqual([]);
  });

  it('evidence - past the token budget a chunk is compressed to its most relevant sentences, never dropped, and stays a copy', () => {
    const long = chunk(
      'long',
      'Long',
      'Filler words about nothing at all here. The Seine flows through Paris. More filler text that matters little.',
    );
    const picked = selectEvidence([long, a], [], 'Which river flows through Paris?', { maxChunks: 5, tokenBudget: 14 });
    expect(picked.map((x) => x.chunkId)).toEqual(['long', 'a']);
    expect(picked[0]?.text).toContain('The Seine flows through Paris.');
    expect(picked[0]?.text).not.toContain('More filler');
    expect(long.text).toContain('More filler');
  });
});

describe('parallel plan layers', () => {
  it('plan - sub-questions run in topological layers', () => {
    const layers = planLayers([
      { id: 'q1', text: 'a', dependsOn: [] },
      { id: 'q2', text: 'b', dependsOn: [] },
      { id: 'q3', text: '#q1', dependsOn: ['q1'] },
      { id: 'q4', text: '#q3 #q2', dependsOn: ['q3', 'q2'] },
    ]);
    expect(layers.map((layer) => layer.map((sub) => sub.id))).toEqual([['q1', 'q2'], ['q3'], ['q4']]);
  });

  it('plan - a cycle does not hang the plan: its members run together in a last layer', () => {
    const layers = planLayers([
      { id: 'q1', text: 'a', dependsOn: ['q2'] },
      { id: 'q2', text: 'b', dependsOn: ['q1'] },
      { id: 'q3', text: 'c', dependsOn: [] },
    ]);
    expect(layers.map((layer) => layer.map((sub) => sub.id))).toEqual([['q3'], ['q1', 'q2']]);
  });
});
