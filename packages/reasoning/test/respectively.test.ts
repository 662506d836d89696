import type { Chunk__Output } from '@hopline/contracts';
import { describe, expect, it } from 'vitest';
import { respectiveItems } from '../src/offline/respectively.js';
import { chunk } from './support/chunks.js';
import { synthesized } from './support/synthesis.js';

describe('respectively - the items of a distributive question share its predicate', () => {
  it('items - each Chinese item gets the setting and the words after 分别, its asking words left out', () => {
    expect(respectiveItems('2031年4月，青川市和澜沧市分别在几月几日开通地铁？')).toEqual([
      { item: '青川市', event: '2031年4月青川市在开通地铁', query: '2031年4月青川市在开通地铁' },
      { item: '澜沧市', event: '2031年4月澜沧市在开通地铁', query: '2031年4月澜沧市在开通地铁' },
    ]);
  });

  it('items - each English item gets the words between the list and "respectively"', () => {
    expect(respectiveItems('When were Northwind Labs and the Harbor Cup founded, respectively?')).toEqual([
      { item: 'Northwind Labs', event: 'Northwind Labs founded', query: 'Northwind Labs founded' },
      { item: 'Harbor Cup', event: 'Harbor Cup founded', query: 'Harbor Cup founded' },
    ]);
  });

  it('items - a predicate that names only a kind of event gives each item its scene, the setting and the item', () => {
    expect(respectiveItems('2031年上半年，柳文川和苏晴分别发生了什么重大事件？')).toEqual([
      {
        item: '柳文川',
        event: '2031年上半年柳文川发生了重大事件',
        query: '2031年上半年柳文川',
        scene: '2031年上半年柳文川',
      },
      {
        item: '苏晴',
        event: '2031年上半年苏晴发生了重大事件',
        query: '2031年上半年苏晴',
        scene: '2031年上半年苏晴',
      },
    ]);
    // A predicate that names what the events are about says what happened: no scene.
    expect(respectiveItems('2031年4月和6月分别发生了哪些关于NBC和青川大桥的事件？').every((item) => !item.scene)).toBe(
      true,
    );
  });

  it('items - a list in the setting, before a subject that 分别 follows, is the items: each a time of that subject', () => {
    expect(respectiveItems('2031年6月和2032年7月，青川队的主场分别出了什么大事？')).toEqual([
      {
        item: '2031年6月',
        event: '2031年6月青川队的主场出了大事',
        query: '2031年6月青川队的主场',
        scene: '2031年6月青川队的主场',
      },
      {
        item: '2032年7月',
        event: '2032年7月青川队的主场出了大事',
        query: '2032年7月青川队的主场',
        scene: '2032年7月青川队的主场',
      },
    ]);
  });

  it('items - a predicate joining as many things as there are items pairs them in order; one listing alternatives does not', () => {
    expect(respectiveItems('2031年4月和6月分别发生了哪些关于NBC和青川大桥的事件？').map(({ event }) => event)).toEqual([
      '2031年4月发生了关于NBC',
      '6月青川大桥的事件',
    ]);
    // Retrieval asks each item the whole predicate: a pairing may be misread.
    expect(respectiveItems('2031年4月和6月分别发生了哪些关于NBC和青川大桥的事件？').map(({ query }) => query)).toEqual([
      '2031年4月发生了关于NBC和青川大桥的事件',
      '6月发生了关于NBC和青川大桥的事件',
    ]);
    expect(respectiveItems('青川市和澜沧市分别发生了什么事件以及具体日期？').map(({ event }) => event)).toEqual([
      '青川市发生了事件以及具体日期',
      '澜沧市发生了事件以及具体日期',
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

  describe('a predicate that names only a kind of event', () => {
    const kindQuestion = '2031年上半年，柳文川和苏晴分别发生了什么重大事件？';
    const appointed = chunk('n-liu', '', '2031年3月，柳文川被任命为青川大学校长。此前他任该校副校长。');
    const resigned = chunk('n-su', '', '2031年5月8日，苏晴辞去澜沧银行行长职务。接任者为副行长林岚。');
    const earlier = chunk('n-su-old', '', '2029年5月8日，苏晴出任澜沧银行行长。');
    const marathon = chunk('n-run', '', '2031年2月，青川市举办冬季马拉松，选手超过一万人。');
    const hops = (su: Chunk__Output) => [
      { focus: '2031年上半年，柳文川？', answer: '马拉松', cited: [marathon, appointed] },
      { focus: '苏晴分别发生了什么重大事件？', answer: '林岚', cited: [su] },
    ];

    it("each item is answered from a chunk about it in the setting, with only the hops' sentences from those chunks", async () => {
      const { answer, abstains } = await synthesized(kindQuestion, hops(resigned));
      expect(abstains).toBe(false);
      // The first hop's marathon is about neither item: its sentence is left out.
      expect(answer).toBe(
        '2031年3月，柳文川被任命为青川大学校长 [2]。2031年5月8日，苏晴辞去澜沧银行行长职务 [3]。接任者为副行长林岚 [3]。',
      );
    });

    it('a chunk about the item outside the setting is no answer: the synthesis abstains naming the item', async () => {
      const { answer, abstains } = await synthesized(kindQuestion, hops(earlier));
      expect(abstains).toBe(true);
      expect(answer).toMatch(/未找到：关于“苏晴”并陈述问题所问之事的文档/);
    });

    it('with eventKinds off the kind is asked of the chunks, which do not state it: an abstention', async () => {
      const { abstains } = await synthesized(kindQuestion, hops(resigned), ['eventKinds']);
      expect(abstains).toBe(true);
    });
  });
});
