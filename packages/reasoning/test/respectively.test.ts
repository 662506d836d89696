import { describe, expect, it } from 'vitest';
import { respectiveItems } from '../src/offline/respectively.js';
import { chunk } from './support/chunks.js';
import { synthesized } from './support/synthesis.js';

describe('respectively - the items of a distributive question share its predicate', () => {
  it('items - each Chinese item gets the setting and the words after 分别, its asking words left out', () => {
    expect(respectiveItems('2031年4月，青川市和澜沧市分别在几月几日开通地铁？')).toEqual([
      { item: '青川市', event: '2031年4月青川市在开通地铁' },
      { item: '澜沧市', event: '2031年4月澜沧市在开通地铁' },
    ]);
  });

  it('items - each English item gets the words between the list and "respectively"', () => {
    expect(respectiveItems('When were Northwind Labs and the Harbor Cup founded, respectively?')).toEqual([
      { item: 'Northwind Labs', event: 'Northwind Labs founded' },
      { item: 'Harbor Cup', event: 'Harbor Cup founded' },
    ]);
  });

  it('items - a question with no distributive word lists none', () => {
    expect(respectiveItems('青川市和澜沧市哪个先开通地铁？')).toEqual([]);
    expect(respectiveItems('When were Northwind Labs and the Harbor Cup founded?')).toEqual([]);
  });
});

describe('respectively - the synthesis answers item by item', () => {
  const question = '青川市和澜沧市分别在几月几日开通地铁？';
  const qingchuan = chunk('n-qc', '', '2031年4月12日，青川市地铁一号线正式开通，全长二十公里。');
  const lanzang = chunk('n-lz', '', '澜沧市首条地铁线路于2031年6月9日开通，沿线设十五个车站。');
  const museum = chunk('n-museum', '', '2031年4月28日，澜沧市博物馆举办古代丝绸展览，展出文物两百余件。');

  it("each item is answered by the sentence of its chunk, though the item's hop lost the predicate", async () => {
    const { answer, abstains } = await synthesized(question, [
      { focus: '青川市？', answer: '二十公里', cited: [qingchuan] },
      { focus: '澜沧市分别在几月几日开通地铁？', answer: '十五个', cited: [lanzang] },
    ]);
    expect(abstains).toBe(false);
    expect(answer).toMatch(/^2031年4月12日，青川市地铁一号线正式开通，全长二十公里 \[1\]。/);
    expect(answer).toContain('澜沧市首条地铁线路于2031年6月9日开通，沿线设十五个车站 [2]。');
  });

  it('a chunk that names the item without the predicate is no answer: the synthesis abstains naming the item', async () => {
    const { answer, abstains } = await synthesized(question, [
      { focus: '青川市？', answer: '二十公里', cited: [qingchuan] },
      { focus: '澜沧市分别在几月几日开通地铁？', answer: '丝绸', cited: [museum] },
    ]);
    expect(abstains).toBe(true);
    expect(answer).toMatch(/^无法根据知识库回答/);
    expect(answer).toMatch(/未找到：关于“澜沧市”并陈述问题所问之事的文档/);
  });
});
