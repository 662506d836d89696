import type { Chunk__Output } from '@hopline/contracts';
import { Route } from '@hopline/contracts';
import { describe, expect, it } from 'vitest';
import { createAnalyzer, createHopReasoner } from '../src/index.js';
import {
  compareDates,
  datedYearIn,
  datesIn,
  inSamePeriod,
  parseDate,
  readTypedAnswer,
} from '../src/offline/answers.js';
import { yearlessDateIn } from '../src/offline/chinese.js';
import { inSetting, listedEvents, listSetting, orderJudgement } from '../src/offline/event-list.js';
import { isAboutEvent, weightedCoverage } from '../src/offline/grade.js';
import { comparedOptions, dateComparison, samePeriod } from '../src/offline/question.js';
import type { ReasoningSwitch } from '../src/switches.js';
import { chunk } from './support/chunks.js';
import { synthesized } from './support/synthesis.js';
import { ask, keepOrder, overlapRetriever } from './support/fixtures.js';

// Untitled news summaries, each opening with the date of what it reports.
const news = [
  chunk('n-bridge', '', '2031年4月12日，青川市新建的跨江大桥正式通车，全长三公里，连接南北两岸。'),
  chunk('n-museum', '', '2031年4月28日，澜沧博物馆举办古代丝绸展览，展出文物两百余件。'),
  chunk('n-rail', '', '2030年11月3日，北岭铁路公司开通夜间列车，沿线设八个车站。'),
  chunk('n-harbor', '', '霞浦港务局于2031年6月9日宣布扩建码头，预计三年内完工。'),
  chunk('n-other', '', '2029年2月1日，某市发布春季旅游指南，推荐十条线路。'),
  chunk('n-festival', '', '红松镇于6月9日举办灯会，吸引游客上万人。'),
];

function reasoner() {
  return createHopReasoner({
    analyzer: createAnalyzer(),
    retriever: overlapRetriever(news),
    reranker: keepOrder,
    config: { topK: 3 },
  });
}

describe('events compared by date - the list a question names', () => {
  it('events - a list split on its separators, the last item joined by a conjunction', () => {
    expect(listedEvents('青川大桥通车、澜沧博物馆举办展览和北岭铁路开通夜间列车，哪个事件最早发生？')).toEqual([
      '青川大桥通车',
      '澜沧博物馆举办展览',
      '北岭铁路开通夜间列车',
    ]);
  });

  it('events - of two conjunctions, the one that leaves an event on each side splits them', () => {
    // "与" joins two parties of one event here; "和" joins the two events.
    expect(listedEvents('霞浦港务局宣布扩建码头和青川市与澜沧市签署合作协议是在同一个月吗？')).toEqual([
      '霞浦港务局宣布扩建码头',
      '青川市与澜沧市签署合作协议',
    ]);
  });

  it('events - parties listed before one predicate are one event each, every one with the predicate', () => {
    expect(listedEvents('青川区、红松区和澜沧区开始试行夜间公交，霞浦港务局扩建码头哪个发生得更早？')).toEqual([
      '青川区开始试行夜间公交',
      '红松区开始试行夜间公交',
      '澜沧区开始试行夜间公交',
      '霞浦港务局扩建码头',
    ]);
    expect(listedEvents('张伟和李娜访问青川市，谁更早进行访问？')).toEqual(['张伟访问青川市', '李娜访问青川市']);
  });

  it('events - an item that is an event of its own keeps its words, whatever predicate follows', () => {
    // A described event ("的…计划") and a place with what happened there ("青川封城") are no bare party.
    expect(listedEvents('霞浦港的扩建计划和张伟访问青川市，哪个更早？')).toEqual([
      '霞浦港的扩建计划',
      '张伟访问青川市',
    ]);
    expect(listedEvents('青川封城和澜沧新增病例是在同一年吗？')).toEqual(['青川封城', '澜沧新增病例']);
  });

  it('events - a clause that points at the list or only sets the time is no event', () => {
    expect(
      listedEvents('以下事件中哪个发生得最早：青川大桥通车、澜沧博物馆举办展览还是北岭铁路开通夜间列车？'),
    ).toEqual(['青川大桥通车', '澜沧博物馆举办展览', '北岭铁路开通夜间列车']);
    expect(listedEvents('2031年4月，青川大桥通车和澜沧博物馆举办展览是在同一天吗？')).toEqual([
      '青川大桥通车',
      '澜沧博物馆举办展览',
    ]);
  });

  it('events - a time that sets the whole list (its own clause, a span, a frame opened by "在") is every event\'s', () => {
    expect(listSetting('2031年4月，青川大桥通车和澜沧博物馆举办展览是在同一天吗？')).toBe('2031年4月');
    expect(listSetting('2031年上半年，青川大桥通车和澜沧博物馆举办展览哪个更早？')).toBe('2031年上半年');
    expect(listSetting('2031年内青川大桥通车、澜沧博物馆举办展览和北岭铁路开通夜间列车，哪个最早？')).toBe('2031年');
    expect(listSetting('在2031年的青川大桥通车和澜沧博物馆举办展览这两件事中，哪个更早？')).toBe('2031年');
    // A date that only opens the first item is that event's; "内蒙古", "中国" are names, not spans.
    expect(listSetting('2031年4月3日青川大桥通车和澜沧博物馆举办展览哪个更早？')).toBeUndefined();
    expect(listSetting('2031年的青川大桥通车和澜沧博物馆举办展览哪个更早？')).toBeUndefined();
    expect(listSetting('2031年内蒙古草原节开幕和澜沧博物馆举办展览哪个更早？')).toBeUndefined();
    expect(listSetting('2031年中国青年节开幕和澜沧博物馆举办展览哪个更早？')).toBeUndefined();
    // An event that states a date of its own keeps it.
    expect(inSetting('澜沧博物馆举办展览', '2031年')).toBe('2031年澜沧博物馆举办展览');
    expect(inSetting('2030年11月北岭铁路开通夜间列车', '2031年')).toBe('2030年11月北岭铁路开通夜间列车');
  });

  it('events - a list framed as the set to pick from ("…中", "…两件事中", "在…之间") keeps its last item whole', () => {
    const both = ['青川大桥通车', '澜沧博物馆举办展览'];
    expect(listedEvents('青川大桥通车和澜沧博物馆举办展览中，哪个发生得更早？')).toEqual(both);
    expect(listedEvents('青川大桥通车和澜沧博物馆举办展览中哪个发生得更早？')).toEqual(both);
    expect(listedEvents('青川大桥通车、澜沧博物馆举办展览两件事中哪件先发生？')).toEqual(both);
    expect(listedEvents('在青川大桥通车与澜沧博物馆举办展览之间，哪个更早？')).toEqual(both);
    expect(listedEvents('霞浦港务局扩建码头、青川大桥通车以及北岭铁路开通夜间列车中，哪个最早？')).toEqual([
      '霞浦港务局扩建码头',
      '青川大桥通车',
      '北岭铁路开通夜间列车',
    ]);
    // A clause that only sets the time is no item, whatever part of the year it names.
    expect(listedEvents('在2031年里，青川大桥通车和澜沧博物馆举办展览哪个更早？')).toEqual(both);
    expect(listedEvents('2031年上半年，青川大桥通车和澜沧博物馆举办展览哪个更早？')).toEqual(both);
    // A locative inside a word is the item's own.
    expect(listedEvents('澜沧博物馆举办展览和青川市暂停集中，哪个更早？')).toEqual([
      '澜沧博物馆举办展览',
      '青川市暂停集中',
    ]);
  });

  it('events - a clause that is only the frame ("在这两件事中") asks nothing: the list is read around the clause that asks', () => {
    const both = ['青川大桥通车', '澜沧博物馆举办展览'];
    expect(listedEvents('在这两件事中，哪件先发生：青川大桥通车还是澜沧博物馆举办展览？')).toEqual(both);
    expect(listedEvents('在这些事件中，青川大桥通车和澜沧博物馆举办展览哪个更早？')).toEqual(both);
    expect(listedEvents('这两个事件里，青川大桥通车与澜沧博物馆举办展览哪个先？')).toEqual(both);
  });

  it('events - a choice with "还是" asks by itself: the predicate after its last option opens with a word of order', () => {
    const question = '青川大桥通车还是澜沧博物馆举办展览先发生？';
    expect(dateComparison(question)).toBe('earlier');
    expect(listedEvents(question)).toEqual(['青川大桥通车', '澜沧博物馆举办展览']);
    expect(listedEvents('青川大桥通车还是澜沧博物馆举办展览发生得更晚？')).toEqual([
      '青川大桥通车',
      '澜沧博物馆举办展览',
    ]);
    // "先" inside a word is no order ("先生").
    expect(dateComparison('张伟还是李先生主持了青川大桥通车仪式？')).toBeUndefined();
  });

  it('events - "或是" and "抑或" separate items as "或" does, and "或者是" leaves no copula on the next item', () => {
    const both = ['青川大桥通车', '澜沧博物馆举办展览'];
    expect(listedEvents('青川大桥通车或是澜沧博物馆举办展览，哪个更早？')).toEqual(both);
    expect(listedEvents('青川大桥通车抑或澜沧博物馆举办展览，哪个更早？')).toEqual(both);
    expect(listedEvents('青川大桥通车或者是澜沧博物馆举办展览，哪个更早？')).toEqual(both);
  });

  it('events - the words that open a question ("请问", "关于…，", "根据报道，") are no part of an event', () => {
    const both = ['青川大桥通车', '澜沧博物馆举办展览'];
    expect(listedEvents('请问青川大桥通车和澜沧博物馆举办展览哪个更早发生？')).toEqual(both);
    expect(listedEvents('关于青川大桥通车和澜沧博物馆举办展览，哪件事情最先发生？')).toEqual(both);
    expect(listedEvents('根据报道，青川大桥通车和澜沧博物馆举办展览哪个事件发生得更早？')).toEqual(both);
    // A "关于" that opens a "的" phrase names the item ("关于X的评论").
    expect(listedEvents('关于青川大桥的评论和澜沧博物馆举办展览，哪个更早？')).toEqual([
      '关于青川大桥的评论',
      '澜沧博物馆举办展览',
    ]);
  });

  it('which first - asking the order ("孰先孰后", "谁早谁晚", "先后顺序") names the first event', () => {
    const both = ['青川大桥通车', '澜沧博物馆举办展览'];
    for (const question of [
      '青川大桥通车和澜沧博物馆举办展览孰先孰后？',
      '青川大桥通车和澜沧博物馆举办展览，谁早谁晚？',
      '青川大桥通车和澜沧博物馆举办展览的先后顺序是什么？',
    ]) {
      expect(dateComparison(question)).toBe('earlier');
      expect(listedEvents(question)).toEqual(both);
    }
    // A comparing verb opens the list, and "前者" points back at it.
    expect(listedEvents('比较青川大桥通车与澜沧博物馆举办展览，哪个更早？')).toEqual(both);
    expect(listedEvents('青川大桥通车和澜沧博物馆举办展览，前者是否更早？')).toEqual(both);
  });

  it('which first - "哪个早" and "谁晚" ask the order as "更早" does; "早餐" and "晚会" do not', () => {
    expect(dateComparison('青川大桥通车与澜沧博物馆举办展览哪个早？')).toBe('earlier');
    expect(dateComparison('青川大桥通车与澜沧博物馆举办展览，哪个晚一些？')).toBe('later');
    expect(dateComparison('哪家酒店为青川大桥通车仪式提供早餐？')).toBeUndefined();
    expect(dateComparison('哪位歌手出席了澜沧春节晚会？')).toBeUndefined();
  });

  it('events - a leading "在…中/里" around no list sets the scene and is no item; around a list it frames it', () => {
    const both = ['霞浦港务局扩建码头', '北岭铁路开通夜间列车'];
    expect(listedEvents('在防汛期间的报道中，霞浦港务局扩建码头和北岭铁路开通夜间列车哪个更早？')).toEqual(both);
    expect(listedEvents('在2033年的新闻里，霞浦港务局扩建码头和北岭铁路开通夜间列车哪个更早？')).toEqual(both);
    expect(listedEvents('在霞浦县的发展中，霞浦港务局扩建码头与北岭铁路开通夜间列车哪个先发生？')).toEqual(both);
    expect(listedEvents('在霞浦港务局扩建码头和北岭铁路开通夜间列车中，哪个更早？')).toEqual(both);
  });

  it('events - a quotation or title of any kind is one name: no "和", "、" or asking word inside it splits the list', () => {
    for (const [open, close] of [
      ["'", "'"],
      ['"', '"'],
      ['‘', '’'],
      ['“', '”'],
      ['「', '」'],
      ['《', '》'],
    ] as const) {
      expect(listedEvents(`霞浦港命名${open}和风号${close}渡轮与青川大桥通车，哪个更早？`)).toEqual([
        `霞浦港命名${open}和风号${close}渡轮`,
        '青川大桥通车',
      ]);
      expect(listedEvents(`青川市启动${open}护河、护林${close}行动和北岭铁路开通夜间列车，哪个更早？`)).toEqual([
        `青川市启动${open}护河、护林${close}行动`,
        '北岭铁路开通夜间列车',
      ]);
      expect(listedEvents(`澜沧剧院上演${open}谁是凶手${close}和青川大桥通车，哪个更早？`)).toEqual([
        `澜沧剧院上演${open}谁是凶手${close}`,
        '青川大桥通车',
      ]);
      // A comma inside a title does not make the scene-setting "在…中" a list.
      expect(
        listedEvents(`在${open}青川三日，澜沧一夜${close}的报道中，霞浦港务局扩建码头和北岭铁路开通夜间列车哪个更早？`),
      ).toEqual(['霞浦港务局扩建码头', '北岭铁路开通夜间列车']);
    }
  });

  it('events - an ASCII quote after a Latin letter is an apostrophe ("Macy\'s"), not a quotation', () => {
    expect(listedEvents("Macy's门店开业和Kohl's门店关闭，哪个更早？")).toEqual(["Macy's门店开业", "Kohl's门店关闭"]);
  });

  it('events - only whole words name a source ("据悉", "根据"); an item opening with "据点" is an item', () => {
    expect(listedEvents('据点建设完成和北岭铁路开通夜间列车，哪个更早？')).toEqual([
      '据点建设完成',
      '北岭铁路开通夜间列车',
    ]);
    expect(listedEvents('据悉，霞浦港务局扩建码头和北岭铁路开通夜间列车哪个更早？')).toEqual([
      '霞浦港务局扩建码头',
      '北岭铁路开通夜间列车',
    ]);
  });

  it('events - the adverb "先后" (one after the other) asks nothing; "先后顺序" asks the order', () => {
    expect(listedEvents('她先后考察了霞浦港和北岭站，哪次考察更早？')).toHaveLength(2);
    expect(listedEvents('霞浦港务局扩建码头和北岭铁路开通夜间列车的先后次序如何？')).toEqual([
      '霞浦港务局扩建码头',
      '北岭铁路开通夜间列车',
    ]);
  });

  it('which first - a word that only holds 先, 晚 or 迟 ("领先", "优先", "迟到", "晚期") asks no order', () => {
    expect(dateComparison('霞浦港务局还是北岭铁路在货运上领先？')).toBeUndefined();
    expect(dateComparison('哪个社区优先获得了补贴？')).toBeUndefined();
    expect(dateComparison('哪位评委迟到了？')).toBeUndefined();
    expect(dateComparison('哪位诗人晚期的作品更多？')).toBeUndefined();
  });

  it('which first - the list reader and dateComparison read one list of order words ("最先", "较迟")', () => {
    const both = ['霞浦港务局扩建码头', '北岭铁路开通夜间列车'];
    for (const [question, end] of [
      ['霞浦港务局扩建码头还是北岭铁路开通夜间列车最先发生？', 'earlier'],
      ['霞浦港务局扩建码头还是北岭铁路开通夜间列车较迟发生？', 'later'],
    ] as const) {
      expect(dateComparison(question)).toBe(end);
      expect(listedEvents(question)).toEqual(both);
    }
  });

  it('order judgement - "A比B早吗", "A是否早于B", "A是在B之前发生的吗" judge the first event against the second', () => {
    const both = ['青川大桥通车', '澜沧博物馆举办展览'];
    for (const [question, end] of [
      ['青川大桥通车比澜沧博物馆举办展览早吗？', 'earlier'],
      ['青川大桥通车是否比澜沧博物馆举办展览发生得更晚？', 'later'],
      ['青川大桥通车是否早于澜沧博物馆举办展览？', 'earlier'],
      ['青川大桥通车是在澜沧博物馆举办展览以前发生的吗？', 'earlier'],
      ['据报道，青川大桥通车发生在澜沧博物馆举办展览之后吗？', 'later'],
    ] as const) {
      expect(orderJudgement(question)).toEqual({ events: both, end });
      expect(comparedOptions(question)).toEqual(both);
      expect(dateComparison(question)).toBe(end);
    }
    // "比" that the segmenter glued to the next name ("比耶森") still compares.
    expect(orderJudgement('张伟访华比耶森访华晚吗？')?.events).toEqual(['张伟访华', '耶森访华']);
  });

  it('order judgement - a question that asks which, or holds "比" inside a word ("比赛"), judges no order', () => {
    expect(orderJudgement('青川大桥通车和澜沧博物馆举办展览哪个更早？')).toBeUndefined();
    expect(orderJudgement('青川队在比赛之前是否进行了训练')).toBeUndefined();
    expect(orderJudgement('青川大桥通车之前举办了什么活动？')).toBeUndefined();
  });

  it('events - only a question about times lists events; elsewhere "和" joins anything', () => {
    expect(comparedOptions('青川大桥和澜沧博物馆在哪个城市？')).toEqual([]);
    expect(samePeriod('青川大桥通车和澜沧博物馆举办展览是同一年发生的吗？')).toBe('year');
    expect(samePeriod('Were the bridge and the museum opened in the same month?')).toBe('month');
  });

  it('dates - read as precisely as stated, compared as far as both are precise', () => {
    expect(parseDate('2031年4月12日')).toEqual({ year: 2031, month: 4, day: 12 });
    expect(parseDate('4月28日', 2031)).toEqual({ year: 2031, month: 4, day: 28 });
    expect(parseDate('4月28日')).toBeUndefined();
    expect(parseDate('14 April 1917')).toEqual({ year: 1917, month: 4, day: 14 });
    const bridge = { year: 2031, month: 4, day: 12 };
    expect(compareDates(bridge, { year: 2030, month: 11 })).toBeGreaterThan(0);
    expect(inSamePeriod(bridge, { year: 2031, month: 4, day: 28 }, 'month')).toBe(true);
    expect(inSamePeriod(bridge, { year: 2031, month: 4, day: 28 }, 'day')).toBe(false);
    expect(inSamePeriod(bridge, { year: 2031 }, 'month')).toBeUndefined();
  });

  it('dates - reading one date leaves the shared patterns at their start, so the next text is read whole', () => {
    expect(parseDate('born 14 April 1917 in Vienna')).toEqual({ year: 1917, month: 4, day: 14 });
    expect(datesIn('2005')).toEqual([{ year: 2005 }]);
    expect(parseDate('opened in 1990')).toEqual({ year: 1990 });
    expect(datesIn('1988')).toEqual([{ year: 1988 }]);
  });

  it('dates - a month and day written without a year before them, and only those', () => {
    expect(yearlessDateIn('红松镇于6月9日举办灯会')).toEqual({ text: '6月9日', month: 6, day: 9 });
    expect(yearlessDateIn('白沙镇12月举办庙会')).toEqual({ text: '12月', month: 12 });
    expect(yearlessDateIn('2031年6月9日，红松镇举办灯会')).toBeUndefined();
    expect(yearlessDateIn('工期13月有余')).toBeUndefined();
    expect(yearlessDateIn('青川市去年2月开通地铁')).toBeUndefined();
  });

  it('dates - a decade named with its century is a date; one without it is not', () => {
    expect(parseDate('自上世纪80年代起')).toEqual({ year: 1980 });
    expect(parseDate('20世纪80年代')).toEqual({ year: 1980 });
    expect(parseDate('19世纪60年代')).toEqual({ year: 1860 });
    expect(parseDate('1970年代')).toEqual({ year: 1970 });
    expect(parseDate('90年代')).toBeUndefined();
    const trend = chunk('n-trend', '', '青川市的人口自上世纪90年代开始不断减少，老龄化加剧。');
    expect(readTypedAnswer('date', [trend], [])?.answer).toBe('上世纪90年代');
  });

  it("dates - a text's dated context is its first date with a month, not a year it cites", () => {
    expect(datedYearIn('《青川日报》6月24日文章指出，2008年金融风暴留下的启示是…')).toBeUndefined();
    expect(datedYearIn('2031年4月，青川大桥通车。6月24日，澜沧博物馆开馆。')).toBe(2031);
    expect(datedYearIn('The bridge, planned in 1990, opened on 14 April 2031.')).toBe(2031);
  });
});

describe('events compared by date - whether a chunk is about the event', () => {
  const bridge = chunk('n-bridge', '', '2031年4月12日，青川市新建的跨江大桥正式通车，全长三公里，连接南北两岸。');
  // Shares the topic's common words (大桥, 正式, 通车) and not the event's name.
  const otherBridge = chunk('n-other-bridge', '', '2030年9月1日，霞浦县一座大桥正式通车，方便两岸居民出行。');

  it('coverage - a chunk that states the names and rare words covers the event; one that shares only common words does not', () => {
    expect(isAboutEvent('青川市跨江大桥通车', bridge)).toBe(true);
    expect(isAboutEvent('青川市跨江大桥通车', otherBridge)).toBe(false);
    expect(weightedCoverage('青川市跨江大桥通车', otherBridge)).toBeGreaterThan(0);
  });

  it('coverage - a common word the chunk leaves out ("事件") costs less than a name', () => {
    expect(isAboutEvent('青川市跨江大桥通车事件', bridge)).toBe(true);
    expect(weightedCoverage('青川市跨江大桥通车事件', bridge)).toBeGreaterThan(
      weightedCoverage('霞浦县跨江大桥通车', bridge),
    );
  });

  it('coverage - a paraphrase that keeps a word\'s morphemes ("判刑" as "判处有期徒刑") states it in part', () => {
    const sentence = chunk('n-court', '', '2031年3月14日，青川市男子韩某被判处有期徒刑三年，并处罚金四万元。');
    // "判刑" is not in the text; its characters are, apart.
    expect(isAboutEvent('韩某被判刑', sentence)).toBe(true);
    expect(weightedCoverage('韩某被判刑', sentence)).toBeLessThan(weightedCoverage('韩某被判处有期徒刑', sentence));
    // A name's characters scattered over other words state nothing of it.
    expect(isAboutEvent('李青被判刑', chunk('n-none', '', '2031年3月14日，青川市召开会议，李某发言。'))).toBe(false);
  });

  it("coverage - a report of another place's event on the day an event is dated to is not about it: the chunk must name the event's parties", () => {
    const event = '2031年4月12日青川市确诊病例数量';
    const otherPlace = chunk(
      'n-other-place',
      '',
      '2031年4月12日，澜沧县报告新增确诊病例12例，患者已送往指定医院观察。',
    );
    const ownPlace = chunk('n-own-place', '', '2031年4月12日，青川市报告新增确诊病例12例，患者已送往指定医院观察。');
    // The date and the common words are most of the event's weight.
    expect(weightedCoverage(event, otherPlace)).toBeGreaterThan(0.65);
    expect(isAboutEvent(event, otherPlace)).toBe(false);
    expect(isAboutEvent(event, otherPlace, ['eventParties'])).toBe(true);
    expect(isAboutEvent(event, ownPlace)).toBe(true);
    // An abbreviation keeps some of a name's characters ("澜港" for "澜州海港").
    const abbreviated = chunk('n-club', '', '2031年5月3日凌晨，甲级联赛首轮比赛，澜港客场以2比0的比分战胜白沙竞技。');
    expect(isAboutEvent('澜州海港2031年5月3日的比赛结果', abbreviated)).toBe(true);
  });

  it('coverage - a chunk about one of the parties an event joins ("青川队对澜沧队的比赛") names the other too, or it is about something else', () => {
    const event = '青川队对澜沧队的比赛';
    const onePartyOnly = chunk(
      'n-one',
      '',
      '2031年5月3日，青川队球星张伟表示将出战剩余所有比赛，他认为每场比赛都很关键。',
    );
    const both = chunk('n-both', '', '2031年5月3日，青川队主场以98比95险胜澜沧队，结束三连败。');
    expect(weightedCoverage(event, onePartyOnly)).toBeGreaterThan(0.65);
    expect(isAboutEvent(event, onePartyOnly)).toBe(false);
    expect(isAboutEvent(event, onePartyOnly, ['eventParties'])).toBe(true);
    expect(isAboutEvent(event, both)).toBe(true);
  });

  it('coverage - a date the event names must agree with one the chunk states, as precisely as named', () => {
    // The same kind of report on another day covers every word of the event and is about another day.
    const otherDay = chunk('n-cases-2', '', '2030年11月2日，青川市新增确诊病例3例，均为外地返回人员。');
    const sameDay = chunk('n-cases-1', '', '2030年2月1日，青川市新增确诊病例265例。');
    expect(weightedCoverage('2030年2月1日青川市新增确诊病例', otherDay)).toBeGreaterThan(0.65);
    expect(isAboutEvent('2030年2月1日青川市新增确诊病例', otherDay)).toBe(false);
    expect(isAboutEvent('2030年2月1日青川市新增确诊病例', sameDay)).toBe(true);
    // A year the event names agrees with a chunk dated within it, and a background year elsewhere
    // in the chunk does not stand for its date ("6月24日" has no year: nothing contradicts 2030).
    expect(isAboutEvent('2030年青川市新增确诊病例', otherDay)).toBe(true);
    expect(isAboutEvent('2029年青川市新增确诊病例', otherDay)).toBe(false);
    const yearless = chunk('n-article', '', '《青川日报》6月24日文章回顾了2008年以来的城市规划。');
    expect(isAboutEvent('2030年《青川日报》文章回顾城市规划', yearless)).toBe(true);
  });

  it('coverage - a chunk that shares only the date an event names, not what happened, is not about it', () => {
    // Another report of the same day: its date is all of the event's words it states.
    const sameDayOther = chunk('n-forum', '', '2031年3月26日，农机博览会在白沙镇开幕。');
    const plan = chunk('n-plan', '', '澜沧省于2031年3月26日发布校园午餐改进试点实施方案。');
    expect(weightedCoverage('2031年3月26日澜沧省方案', sameDayOther)).toBeGreaterThan(0.65);
    expect(isAboutEvent('2031年3月26日澜沧省方案', sameDayOther)).toBe(false);
    expect(isAboutEvent('2031年3月26日澜沧省方案', plan)).toBe(true);
    // A paraphrase that the date ties to the event still is about it ("澜港" for "澜州海港").
    const match = chunk('n-match', '', '2031年8月13日凌晨，甲级联赛首轮，澜港客场以2-0的比分战胜对手。');
    expect(isAboutEvent('澜州海港2031年8月13日的比赛结果', match)).toBe(true);
  });

  it('dates - a part of a month ("10月中旬", "6月底") dates an event to its month, the year read from the text', () => {
    expect(datesIn('2031年4月，青川大桥通车；10月中旬，澜沧港扩建。')).toEqual([
      { year: 2031, month: 4 },
      { year: 2031, month: 10 },
    ]);
    expect(datesIn('市长计划于10月中旬赴外地考察。')).toEqual([{ month: 10 }]);
    expect(parseDate('10月中旬', 2031)).toEqual({ year: 2031, month: 10 });
    // A month alone, with nothing after it, stays unread: "10月" also counts months ("前10月").
    expect(datesIn('前10月，青川市出口增长。')).toEqual([]);
  });

  it('dates - every date a text states; a four-digit count is no year', () => {
    expect(datesIn('2031年4月12日通车，5月3日验收，2008年规划')).toEqual([
      { year: 2031, month: 4, day: 12 },
      { year: 2031, month: 5, day: 3 },
      { year: 2008 },
    ]);
    expect(datesIn('6月24日文章')).toEqual([{ month: 6, day: 24 }]);
    expect(datesIn('累计确诊病例1946例')).toEqual([]);
    const counts = chunk('n-counts', '', '累计确诊病例1946例，累计治愈出院病例1862例。');
    expect(readTypedAnswer('date', [counts], [])).toBeUndefined();
  });

  it('coverage - English words count by their stems, the title with the text', () => {
    const museum = chunk('m', 'Lakeside Museum', 'The museum opened its doors in March 2019.');
    expect(isAboutEvent('Lakeside Museum opening', museum)).toBe(true);
    expect(isAboutEvent('Harbor Gallery opening', museum)).toBe(false);
  });
});

describe('events compared by date - the loop, offline', () => {
  it('same month - each event gets its own sub-query, and the judgement compares the dates its documents state', async () => {
    const yes = await reasoner().answer(ask('青川市跨江大桥通车和澜沧博物馆举办丝绸展览是在同一个月吗？'), {
      emit: () => undefined,
    });
    expect(yes.done.route).toBe(Route.PARALLEL);
    // Each event is looked up by its own words, not the whole question's.
    expect(yes.trace.hops.map((hop) => hop.query)).toEqual(['青川市跨江大桥通车', '澜沧博物馆举办丝绸展览']);
    expect(yes.done.abstained).toBe(false);
    expect(yes.done.answer).toMatch(/^是的。/);
    expect(yes.done.answer).toContain('2031年4月12日');
    expect(yes.done.answer).toContain('2031年4月28日');

    const no = await reasoner().answer(ask('青川市跨江大桥通车与霞浦港务局宣布扩建码头是在同一个月发生的吗？'), {
      emit: () => undefined,
    });
    expect(no.done.answer).toMatch(/^不是。/);
  });

  it('which first - the earliest of three events is named, cited to the chunk that dates it', async () => {
    const { done } = await reasoner().answer(
      ask('青川市跨江大桥通车、澜沧博物馆举办丝绸展览和北岭铁路公司开通夜间列车，哪个事件最早发生？'),
      { emit: () => undefined },
    );
    expect(done.abstained).toBe(false);
    expect(done.answer).toMatch(/^北岭铁路公司开通夜间列车 \[\d\]。/);
    const rail = done.citations.find((citation) => citation.chunkId === 'n-rail');
    expect(rail).toBeDefined();
    expect(done.answer).toContain(`[${rail?.index}]`);
  });

  it("which first - a document's date without a year takes the year the question gives the event, not a year the document cites", async () => {
    // The article's only year is history it cites (2008); the question dates the article 2031.
    const article = chunk('n-article', '', '《青川日报》6月24日发表文章指出，青川大桥的建设经验来自2008年的一次规划。');
    const { done } = await createHopReasoner({
      analyzer: createAnalyzer(),
      retriever: overlapRetriever([...news, article]),
      reranker: keepOrder,
      config: { topK: 3 },
    }).answer(ask('2031年《青川日报》发表关于青川大桥的文章和北岭铁路公司开通夜间列车，哪个事件先发生？'), {
      emit: () => undefined,
    });
    expect(done.abstained).toBe(false);
    expect(done.answer).toMatch(/^北岭铁路公司开通夜间列车 \[\d\]/);
  });

  it('same month - a date whose year no document gives leaves the judgement open: the chain is complete, the answer abstains', async () => {
    const { done } = await reasoner().answer(ask('霞浦港务局宣布扩建码头和红松镇举办灯会是在同一个月吗？'), {
      emit: () => undefined,
    });
    expect(done.abstained).toBe(true);
    // The gap is named: the event whose date has no year, not the one its document dates.
    expect(done.answer).toMatch(/未找到：关于“红松镇举办灯会”并陈述其日期的文档/);
    expect(done.answer).not.toMatch(/未找到：.*霞浦港务局/);
  });

  it('which first - an event no document dates leaves the comparison open: an abstention that says so, after one retrieval of the whole question', async () => {
    const retriever = overlapRetriever(news);
    const question = '青川市跨江大桥通车和东湾机场新航站楼启用，哪个事件先发生？';
    const { done } = await createHopReasoner({
      analyzer: createAnalyzer(),
      retriever,
      reranker: keepOrder,
      config: { topK: 3 },
    }).answer(ask(question), { emit: () => undefined });
    expect(done.abstained).toBe(true);
    expect(done.answer).toMatch(/未找到/);
    const queries = retriever.calls.map((call) => call.query);
    expect(queries).toHaveLength(3);
    expect(queries[0]).toMatch(/^青川市跨江大桥通车/);
    expect(queries[1]).toMatch(/^东湾机场新航站楼启用/);
    expect(queries[2]).toBe(question);
  });

  it('which first - a dated document about another event is no date for this one: the answer abstains, naming the event', async () => {
    // The airport event's only candidate shares "机场" and a date, and is about another airport.
    const corpus = [...news, chunk('n-other-airport', '', '2029年3月1日，西岭机场举办航空开放日，吸引游客上万人。')];
    const { done, trace } = await createHopReasoner({
      analyzer: createAnalyzer(),
      retriever: overlapRetriever(corpus),
      reranker: keepOrder,
      config: { topK: 3 },
    }).answer(ask('青川市跨江大桥通车和东湾机场新航站楼启用，哪个事件先发生？'), { emit: () => undefined });
    expect(trace.hops.some((hop) => hop.evidenceChunkIds.includes('n-other-airport'))).toBe(true);
    expect(done.abstained).toBe(true);
    expect(done.answer).toMatch(/未找到：.*东湾机场新航站楼启用/);
    expect(done.answer).not.toContain('2029年3月1日');
  });

  const bridge = news[0] as Chunk__Output;

  it('which first - an option its document does not date is no guess: the answer abstains and names that option', async () => {
    const airport = chunk('n-airport', '', '东湾机场新航站楼启用，旅客可乘地铁直达。');
    const { answer, abstains } = await synthesized('青川市跨江大桥通车和东湾机场新航站楼启用，哪个事件先发生？', [
      { focus: '青川市跨江大桥通车', answer: '2031年4月12日', cited: [bridge] },
      { focus: '东湾机场新航站楼启用', answer: '地铁', cited: [airport] },
    ]);
    expect(abstains).toBe(true);
    expect(answer).toMatch(/^无法根据知识库回答/);
    expect(answer).toMatch(/已找到：2031年4月12日，青川市新建的跨江大桥正式通车.*\[1\]/);
    expect(answer).toMatch(/未找到：关于“东湾机场新航站楼启用”并陈述其日期的文档/);
  });

  it('which first - a date its document gives without a year is in the year the question names for the event, not a background year', async () => {
    const article = chunk('n-article', '', '《青川日报》6月24日文章指出，自2008年以来青川市的城市规划多次调整。');
    const { answer } = await synthesized('青川市跨江大桥通车和2032年《青川日报》发表城市规划文章，哪个事件更早？', [
      { focus: '青川市跨江大桥通车', answer: '2031年4月12日', cited: [bridge] },
      { focus: '2032年《青川日报》发表城市规划文章', answer: '6月24日', cited: [article] },
    ]);
    expect(answer).toMatch(/^青川市跨江大桥通车 \[1\]/);
  });

  it('which first - a date stated without any year is read in the year the other documents give, and the answer says so', async () => {
    // The festival's summary names no year at all; the bridge's gives 2031.
    const festival = news[5] as Chunk__Output;
    const question = '青川市跨江大桥通车和红松镇举办灯会，哪个事件先发生？';
    const hops = [
      { focus: '青川市跨江大桥通车', answer: '2031年4月12日', cited: [bridge] },
      { focus: '红松镇举办灯会', answer: '6月9日', cited: [festival] },
    ];
    const { answer, abstains } = await synthesized(question, hops);
    expect(abstains).toBe(false);
    expect(answer).toMatch(/^青川市跨江大桥通车 \[1\]/);
    expect(answer).toContain('6月9日 [2]：文档未写年份，此处按其余事件文档的年份（2031年）比较');
    // Switched off, the yearless date is no date: the answer abstains and names the event.
    const off = await synthesized(question, hops, ['yearlessDates']);
    expect(off.abstains).toBe(true);
    expect(off.answer).toMatch(/未找到：关于“红松镇举办灯会”并陈述其日期的文档/);
  });

  it("which first - a yearless date the other documents' years would order differently leaves the comparison open", async () => {
    // In 2030 the festival (6月9日) comes first; in 2031 the railway (2030年11月3日) does.
    const festival = news[5] as Chunk__Output;
    const rail = news[2] as Chunk__Output;
    const { answer, abstains } = await synthesized(
      '北岭铁路公司开通夜间列车、青川市跨江大桥通车和红松镇举办灯会，哪个事件最早发生？',
      [
        { focus: '北岭铁路公司开通夜间列车', answer: '2030年11月3日', cited: [rail] },
        { focus: '青川市跨江大桥通车', answer: '2031年4月12日', cited: [bridge] },
        { focus: '红松镇举办灯会', answer: '6月9日', cited: [festival] },
      ],
    );
    expect(abstains).toBe(true);
    expect(answer).toMatch(/未找到：关于“红松镇举办灯会”并陈述其日期的文档/);
  });

  it('which first - two yearless dates ordered with years on every side: the same answer in each year', async () => {
    const fair = chunk('n-fair', '', '白沙镇于9月2日举办庙会，吸引游客上万人。');
    const { answer, abstains } = await synthesized(
      '青川市跨江大桥通车、北岭铁路公司开通夜间列车和白沙镇举办庙会，哪个事件最晚发生？',
      [
        { focus: '青川市跨江大桥通车', answer: '2031年4月12日', cited: [bridge] },
        { focus: '北岭铁路公司开通夜间列车', answer: '2030年11月3日', cited: [news[2] as Chunk__Output] },
        { focus: '白沙镇举办庙会', answer: '9月2日', cited: [fair] },
      ],
    );
    // Read in 2030 the fair is before the railway, in 2031 after the bridge: the latest differs.
    expect(abstains).toBe(true);
    expect(answer).toMatch(/未找到：关于“白沙镇举办庙会”/);
  });

  it("which first - a document that names a year anywhere is read in it, not placed in another event's year", async () => {
    const article = chunk('n-review', '', '《青川日报》6月24日文章回顾了2008年以来青川市的规划调整。');
    const { answer } = await synthesized('青川市跨江大桥通车和《青川日报》发表规划回顾文章，哪个事件更早？', [
      { focus: '青川市跨江大桥通车', answer: '2031年4月12日', cited: [bridge] },
      { focus: '《青川日报》发表规划回顾文章', answer: '6月24日', cited: [article] },
    ]);
    expect(answer).not.toContain('文档未写年份');
  });

  it('same month - a date with no year still tells a different month apart: the judgement is no', async () => {
    const harbor = news[3] as Chunk__Output;
    const fair = chunk('n-fair', '', '白沙镇于9月2日举办庙会，吸引游客上万人。');
    const question = '霞浦港务局宣布扩建码头和白沙镇举办庙会是在同一个月吗？';
    const different = await synthesized(question, [
      { focus: '霞浦港务局宣布扩建码头', answer: '2031年6月9日', cited: [harbor] },
      { focus: '白沙镇举办庙会', answer: '9月2日', cited: [fair] },
    ]);
    expect(different.abstains).toBe(false);
    expect(different.answer).toMatch(/^不是。/);
    // The same month with no year is no judgement: which year is not known.
    const sameMonth = await synthesized(question, [
      { focus: '霞浦港务局宣布扩建码头', answer: '2031年6月9日', cited: [harbor] },
      { focus: '白沙镇举办庙会', answer: '6月2日', cited: [chunk('n-fair-june', '', '白沙镇于6月2日举办庙会。')] },
    ]);
    expect(sameMonth.abstains).toBe(true);
    expect(sameMonth.answer).toMatch(/未找到：关于“白沙镇举办庙会”并陈述其日期的文档/);
  });

  it('conflict - two documents about one event give it different months and neither is newer: the best match stands and the answer says they disagree', async () => {
    const talks = [
      chunk('n-talks-1', '', '2031年3月19日，青川与澜沧两市就跨江大桥收费问题举行谈判。'),
      chunk('n-talks-2', '', '2031年8月9日，青川与澜沧两市就跨江大桥收费问题重启谈判。'),
    ];
    const question = '青川市跨江大桥通车和两市大桥收费谈判是在同一个月吗？';
    const events = [
      { focus: '青川市跨江大桥通车', answer: '2031年4月12日', cited: [bridge] },
      { focus: '两市大桥收费谈判', answer: '2031年3月19日', cited: talks },
    ];
    const { answer, abstains } = await synthesized(question, events);
    expect(abstains).toBe(false);
    expect(answer).toMatch(/^不是。/);
    expect(answer).toContain(
      '文档对“两市大桥收费谈判”的日期说法不一，且无法判断哪份更新，此处采用与之最相符的文档的日期。2031年3月19日 [2]；2031年8月9日 [3]。',
    );
    // Dates that agree at the precision asked are no conflict: both talks fell in 2031.
    const sameYear = await synthesized(question.replace('同一个月', '同一年'), events);
    expect(sameYear.answer).toMatch(/^是的。/);
    expect(sameYear.answer).not.toContain('说法不一');
  });

  it('conflict - where the documents disagree, the date of the newest document wins and the answer says so', async () => {
    const talks = [
      {
        ...chunk('n-talks-1', '', '2031年3月19日，青川与澜沧两市就跨江大桥收费问题举行谈判。'),
        effectiveDate: '2031-03-19',
      },
      {
        ...chunk('n-talks-2', '', '2031年4月2日，青川与澜沧两市就跨江大桥收费问题举行谈判。'),
        effectiveDate: '2031-04-03',
      },
    ];
    const { answer, abstains } = await synthesized('青川市跨江大桥通车和两市大桥收费谈判是在同一个月吗？', [
      { focus: '青川市跨江大桥通车', answer: '2031年4月12日', cited: [{ ...bridge, effectiveDate: '2031-04-12' }] },
      { focus: '两市大桥收费谈判', answer: '2031年3月19日', cited: talks },
    ]);
    expect(abstains).toBe(false);
    expect(answer).toMatch(/^是的。/);
    expect(answer).toContain(
      '文档对“两市大桥收费谈判”的日期说法不一，此处采用最新文档的日期。2031年4月2日 [3]；2031年3月19日 [2]。',
    );
  });

  it('which first - parties that share a predicate tie on its date: the answer names them all', async () => {
    const corpus = [
      ...news,
      chunk('n-buses', '', '2030年5月6日起，青川区和红松区开始试行夜间公交，每晚运行至凌晨两点。'),
    ];
    const { done, trace } = await createHopReasoner({
      analyzer: createAnalyzer(),
      retriever: overlapRetriever(corpus),
      reranker: keepOrder,
      config: { topK: 3 },
    }).answer(ask('青川区和红松区开始试行夜间公交，北岭铁路公司开通夜间列车哪个发生得更早？'), {
      emit: () => undefined,
    });
    expect(trace.hops.map((hop) => hop.query)).toEqual([
      '青川区开始试行夜间公交',
      '红松区开始试行夜间公交',
      '北岭铁路公司开通夜间列车',
    ]);
    expect(done.abstained).toBe(false);
    expect(done.answer).toMatch(/^青川区开始试行夜间公交 \[(\d)\]、红松区开始试行夜间公交 \[\1\]。/);
  });

  it('which first - "发生在前" asks for the earlier event, "发生在后" for the later', () => {
    expect(dateComparison('青川市跨江大桥通车与北岭铁路公司开通夜间列车，哪个事件发生在前？')).toBe('earlier');
    expect(dateComparison('青川市跨江大桥通车与北岭铁路公司开通夜间列车，哪个发生在后？')).toBe('later');
    // "在前" inside a phrase is no question of order.
    expect(dateComparison('青川市在前线设立的医院何时启用？')).toBeUndefined();
  });

  it('which first - an option closed by the noun for its kind ("…的事件") is matched by what happened, which a chunk states without that noun', async () => {
    const sentence = chunk('n-sentence', '', '2031年5月6日，青川市中级法院以盗窃罪判处柳文川有期徒刑两年。');
    const question = '柳文川被判刑的事件和北岭铁路公司开通夜间列车，哪个发生在前？';
    const asked = (switchedOff: ReasoningSwitch[]) =>
      createHopReasoner({
        analyzer: createAnalyzer(),
        retriever: overlapRetriever([...news, sentence]),
        reranker: keepOrder,
        config: { topK: 3, switchedOff },
      }).answer(ask(question), { emit: () => undefined });
    const { done } = await asked([]);
    expect(done.abstained).toBe(false);
    expect(done.answer).toMatch(/^北岭铁路公司开通夜间列车 \[\d\]/);
    expect(done.answer).toContain('2031年5月6日');
    // Asked of the chunk, "事件" and the paraphrased "判刑" leave too little of the event stated.
    const without = await asked(['eventKinds']);
    expect(without.done.abstained).toBe(true);
    expect(without.done.answer).toMatch(/未找到：.*柳文川被判刑的事件/);
  });

  it('order judgement - "A比B早吗" looks each event up and answers 是的 or 不是 from their dates', async () => {
    const asked = (question: string, switchedOff: ReasoningSwitch[] = []) =>
      createHopReasoner({
        analyzer: createAnalyzer(),
        retriever: overlapRetriever(news),
        reranker: keepOrder,
        config: { topK: 3, switchedOff },
      }).answer(ask(question), { emit: () => undefined });
    const yes = await asked('青川市跨江大桥通车比澜沧博物馆举办丝绸展览早吗？');
    expect(yes.done.route).toBe(Route.PARALLEL);
    expect(yes.trace.hops.map((hop) => hop.query)).toEqual(['青川市跨江大桥通车', '澜沧博物馆举办丝绸展览']);
    expect(yes.done.answer).toMatch(/^是的。/);
    expect(yes.done.answer).toContain('2031年4月12日');
    expect(yes.done.answer).toContain('2031年4月28日');
    const no = await asked('青川市跨江大桥通车是否在北岭铁路公司开通夜间列车之前？');
    expect(no.done.answer).toMatch(/^不是。/);
    const later = await asked('青川市跨江大桥通车发生在北岭铁路公司开通夜间列车之后吗？');
    expect(later.done.answer).toMatch(/^是的。/);
    // Without the judgement the answer names the event the dates put first, as a which-first one does.
    const without = await asked('青川市跨江大桥通车是否在北岭铁路公司开通夜间列车之前？', ['orderJudgements']);
    expect(without.done.answer).toMatch(/^北岭铁路公司开通夜间列车 \[\d\]/);
  });

  it('which first - an answered comparison needs no whole-question retrieval', async () => {
    const retriever = overlapRetriever(news);
    await createHopReasoner({ analyzer: createAnalyzer(), retriever, reranker: keepOrder, config: { topK: 3 } }).answer(
      ask('青川市跨江大桥通车和北岭铁路公司开通夜间列车，哪个事件先发生？'),
      { emit: () => undefined },
    );
    expect(retriever.calls).toHaveLength(2);
  });

  it('which first - an event no document dates, asked through the default reasoner, abstains', async () => {
    const { done } = await reasoner().answer(ask('青川市跨江大桥通车和东湾机场新航站楼启用，哪个事件先发生？'), {
      emit: () => undefined,
    });
    expect(done.abstained).toBe(true);
    expect(done.answer).toMatch(/未找到/);
  });
});
