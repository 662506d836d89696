import { Route } from '@hopline/contracts';
import { describe, expect, it } from 'vitest';
import { analyzeByRules } from '../src/index.js';

describe('query-understanding rules - routes', () => {
  it.each([['When was Mirela Dunstan born?'], ['What is the capital of France?'], ['公司的年假有几天？']])(
    'rules - a plain lookup is SINGLE with complexity 1: %s',
    (question) => {
      const analysis = analyzeByRules(question);
      expect(analysis.route).toBe(Route.SINGLE);
      expect(analysis.complexity).toBe(1);
      expect(analysis.decided).toBe(true);
    },
  );

  it.each([
    ['Which film came out first, How To Lose Nothing or Sela Vanu?', ['How To Lose Nothing', 'Sela Vanu']],
    ['Who is older, Amara Wekesa or Ned Pike?', ['Amara Wekesa', 'Ned Pike']],
    [
      "Which director, Liam O'Farrow or Dusty McRae, is a graduate of the Velmar School of Drama?",
      ["Liam O'Farrow", 'Dusty McRae'],
    ],
    ['Are Chasing Tenbury and Under Salt And Ash from the same country?', ['Chasing Tenbury', 'Under Salt And Ash']],
    ['What type of movies are 47 Lanterns and Q-Drive?', ['47 Lanterns', 'Q-Drive']],
    // A question that opens with its verb and ends on a comparative chooses too, commas and all.
    ['Is the Harbor Tower or Lakeside Plaza Skyscraper taller?', ['Harbor Tower', 'Lakeside Plaza Skyscraper']],
    [
      'Was Northwind College or University of Bergen, Oslo Campus founded first?',
      ['Northwind College', 'University of Bergen, Oslo Campus'],
    ],
  ])('rules - independent foci are PARALLEL with one sub-question each: %s', (question, foci) => {
    const analysis = analyzeByRules(question);
    expect(analysis.route).toBe(Route.PARALLEL);
    expect(analysis.subQuestions).toHaveLength(2);
    analysis.subQuestions.forEach((sub, index) => {
      expect(sub.text).toContain(foci[index]);
      expect(sub.text).not.toContain(foci[1 - index]);
      expect(sub.dependsOn).toEqual([]);
    });
  });

  it.each([
    ['Compare the leave policies of the Berlin and Paris offices.'],
    ['对比 北京办公室 和 上海办公室 的年假政策'],
    ['Who founded Acme? When was it founded?'],
  ])('rules - comparison words, 对比 and several question marks fire multi-focus signals: %s', (question) => {
    const analysis = analyzeByRules(question);
    expect(analysis.signals.some((signal) => /^(compare|questions:|choice|conjunction)/.test(signal))).toBe(true);
    expect(analysis.complexity).toBeGreaterThanOrEqual(2);
  });

  it.each([
    ['Who is the coach of the team that won the 1990 World Cup?', 'bridge:relative-clause'],
    ['Where was the director of film Salt and Ember born?', 'bridge:role-of'],
    ["What is the place of birth of Odile Marie Varenne's father?", 'bridge:possessive'],
    ['Who is the writer for a Velmarian radio comedy created by Tess Hale?', 'bridge:participle'],
    ['What did the actress in Harbor Lights win an award for?', 'bridge:role-of'],
    ["What county is Mira Solen's birthplace a part of?", 'bridge:possessive'],
    ['Whose sister played the lead in Harbor Lights?', 'bridge:whose-role'],
    ['项目A 的负责人属于哪个部门？', 'bridge:zh-de'],
    // A role the name finder knows, beyond the twelve the rules once listed apart.
    ['青川队的主教练毕业于哪所大学？', 'bridge:zh-de'],
  ])('rules - a bridge is ITERATIVE with at least two hops: %s', (question, signal) => {
    const analysis = analyzeByRules(question);
    expect(analysis.route).toBe(Route.ITERATIVE);
    expect(analysis.signals).toContain(signal);
    expect(analysis.complexity).toBeGreaterThanOrEqual(2);
  });

  it('rules - a role "in" a time, not a title, links to no other entity', () => {
    expect(analyzeByRules('Who was the president in 1990?').signals).not.toContain('bridge:role-of');
  });

  it('rules - two "的" in two items of a list are no nested possessive: no bridge', () => {
    expect(analyzeByRules('青川市的大桥和澜沧市的博物馆在哪条河边？').signals).not.toContain('bridge:zh-de');
    expect(analyzeByRules('青川市的大桥的设计者是谁？').signals).toContain('bridge:zh-de');
  });

  it('rules - a Chinese role that "谁" asks for is the answer\'s own relation: one lookup, no bridge', () => {
    for (const question of ['青禾项目的负责人是谁？', '谁是青禾项目的负责人？']) {
      const analysis = analyzeByRules(question);
      expect(analysis.signals).not.toContain('bridge:zh-de');
      expect(analysis.route).toBe(Route.SINGLE);
      expect(analyzeByRules(question, ['roleAsked']).signals).toContain('bridge:zh-de');
    }
    // A role passed through on the way to what is asked still links to the role-holder.
    expect(analyzeByRules('青禾项目的负责人属于哪个部门？').signals).toContain('bridge:zh-de');
    expect(analyzeByRules('青川市的大桥的设计者是谁？').signals).toContain('bridge:zh-de');
  });

  it('rules - a name holding a conjunction\'s character ("和平", "普及") between two "的" lists nothing: a bridge', () => {
    for (const question of ['霞浦县的和平公园的设计者是谁？', '北岭集团的普及活动的发起人是谁？']) {
      const analysis = analyzeByRules(question);
      expect(analysis.signals).toContain('bridge:zh-de');
      expect(analysis.route).toBe(Route.ITERATIVE);
    }
  });

  it('rules - things compared by their times are no bridge, whatever "的" names them', () => {
    // With no list read, the comparison still goes no bridge's way.
    const analysis = analyzeByRules('青川市的市长的讲话和澜沧市的博物馆的开幕哪个先？', ['timedEvents']);
    expect(analysis.signals).not.toContain('bridge:zh-de');
    expect(analysis.route).not.toBe(Route.ITERATIVE);
  });

  it('rules - a distributive question asks each item with the setting and the predicate the items share', () => {
    const question = '2031年4月，青川市和澜沧市分别在几月几日开通地铁？';
    const analysis = analyzeByRules(question);
    expect(analysis.route).toBe(Route.PARALLEL);
    expect(analysis.subQuestions.map((sub) => sub.text)).toEqual([
      '2031年4月青川市在开通地铁',
      '2031年4月澜沧市在开通地铁',
    ]);
    // Off, the first item is cut from the predicate the question states once, after the last.
    const off = analyzeByRules(question, ['respectiveFoci']);
    expect(off.subQuestions[0]?.text).not.toContain('开通地铁');
  });

  it('rules - a listed event is looked up in the time the question sets the list in, unless it states its own', () => {
    const question = '2031年4月，青川大桥通车和澜沧博物馆举办展览是在同一天吗？';
    expect(analyzeByRules(question).subQuestions.map((sub) => sub.text)).toEqual([
      '2031年4月青川大桥通车',
      '2031年4月澜沧博物馆举办展览',
    ]);
    const framed = analyzeByRules('在2031年的青川大桥通车和澜沧博物馆举办展览这两件事中，哪个更早？');
    expect(framed.subQuestions.map((sub) => sub.text)).toEqual(['2031年的青川大桥通车', '2031年澜沧博物馆举办展览']);
    // Off, the clause that only sets the time is dropped with the list's pointers.
    const off = analyzeByRules(question, ['listSettings']);
    expect(off.subQuestions.map((sub) => sub.text)).toEqual(['青川大桥通车', '澜沧博物馆举办展览']);
  });

  it('rules - a predicate paired item by item is still asked whole of each item: the pairing may be misread', () => {
    const analysis = analyzeByRules('2031年6月，柳文川和北岭集团分别参与了哪些会议与展览？');
    expect(analysis.subQuestions.map((sub) => sub.text)).toEqual([
      '2031年6月柳文川参与了会议与展览',
      '2031年6月北岭集团参与了会议与展览',
    ]);
  });

  it('rules - "birthplace" is one link, counted once however it is written', () => {
    const oneWord = analyzeByRules('What is the famous bridge in the birthplace of the composer of Lantern Hymns?');
    const twoWords = analyzeByRules('What is the famous bridge in the birth place of the composer of Lantern Hymns?');
    expect(oneWord.complexity).toBe(3);
    expect(twoWords.complexity).toBe(3);
  });

  it('rules - deeper nesting raises the hops a bridge question is expected to take', () => {
    const two = analyzeByRules('Where was the director of film Salt and Ember born?');
    const four = analyzeByRules(
      "How many ethnic minorities were looked at differently in the city where the headquarters of the company that Study in Brown's record label is a part of?",
    );
    expect(four.complexity).toBeGreaterThan(two.complexity);
  });

  it('rules - foci whose documents only name a role are planned in two layers, the second depending on the first', () => {
    const analysis = analyzeByRules('Which film has the director born later, Cobalt Ridge Riders or Grey Lanterns?');
    expect(analysis.route).toBe(Route.PARALLEL);
    expect(analysis.subQuestions.map((sub) => sub.dependsOn)).toEqual([[], [], ['q1'], ['q2']]);
    expect(analysis.subQuestions[2]?.text).toMatch(/^#q1 /);
  });

  it('rules - whether foci share a role-holder is one layer: the holders are compared, nothing is asked of them', () => {
    // Whatever role the wording reads elsewhere ("Sisters", a word of a title), the holders compared are the authors.
    const analysis = analyzeByRules('Are the novels Harbor Lights and The Winter Sisters by the same author?');
    expect(analysis.route).toBe(Route.PARALLEL);
    expect(analysis.subQuestions.map((sub) => sub.dependsOn)).toEqual([[], []]);
    expect(analysis.subQuestions[0]?.text).toContain('Harbor Lights');
    expect(analysis.subQuestions[1]?.text).toContain('The Winter Sisters');
  });

  it('rules - a difference a relative clause describes is no comparison: the thing that sets them apart is asked, not each focus', () => {
    const described = analyzeByRules(
      'What is the policy that makes the main difference between the Berlin office and the Paris office?',
    );
    expect(described.signals).not.toContain('compare');
    expect(described.route).not.toBe(Route.PARALLEL);
    expect(analyzeByRules('What is the difference between the Berlin office and the Paris office?').signals).toContain(
      'compare',
    );
  });

  it('rules - a multi-focus signal never lowers the complexity of a bridge question', () => {
    const plain = analyzeByRules('Who is the coach of the team that won the 1990 World Cup?');
    const multi = analyzeByRules('Who is the coach of the team that won the 1990 World Cup? Who owns it?');
    expect(multi.complexity).toBeGreaterThanOrEqual(plain.complexity);
  });

  it('rules - a long question with no signal is left undecided, for a model to plan when there is one', () => {
    const vague = analyzeByRules(
      'Why do some historians think the long economic decline of the late empire began well before its famous military defeats and territorial losses?',
    );
    expect(vague.decided).toBe(false);
  });

  it('rules - a question that names no entity is fuzzy: a hypothetical answer would help the vector path', () => {
    expect(analyzeByRules('how do plants turn light into food?').fuzzy).toBe(true);
    expect(analyzeByRules('When was Mirela Dunstan born?').fuzzy).toBe(false);
  });
});
