import { describe, expect, it } from 'vitest';
import {
  asksOrder,
  bestAnswerScore,
  characterTokens,
  goldJudgement,
  isJudgement,
  openingJudgement,
  scoreAnswer,
  shortAnswer,
} from '../src/index.js';

describe('answer scores', () => {
  it('answers - English is scored as HotpotQA does: case, punctuation and articles aside, F1 over words', () => {
    expect(scoreAnswer('The Eiffel Tower.', 'eiffel tower')).toEqual({ em: true, f1: 1 });
    const partial = scoreAnswer('Eiffel Tower in Paris', 'the Eiffel Tower');
    expect(partial.em).toBe(false);
    expect(partial.f1).toBeCloseTo((2 * 0.5 * 1) / 1.5, 10);
    expect(scoreAnswer('yes it is', 'yes')).toEqual({ em: false, f1: 0 });
    expect(scoreAnswer('Paris', 'London')).toEqual({ em: false, f1: 0 });
  });

  it('answers - Chinese is scored by characters, a run of Latin letters or digits counting as one', () => {
    expect(characterTokens('数据平台部 C919，2023年')).toEqual(['数', '据', '平', '台', '部', 'c919', '2023', '年']);
    expect(scoreAnswer('数据平台部。', '数据平台部')).toEqual({ em: true, f1: 1 });
    // 4 of the 5 gold characters, in a 6-character prediction: precision 4/6, recall 4/5.
    const partial = scoreAnswer('数据平台中心', '数据平台部');
    expect(partial.em).toBe(false);
    expect(partial.f1).toBeCloseTo((2 * (4 / 6) * (4 / 5)) / (4 / 6 + 4 / 5), 10);
    expect(scoreAnswer('李明', '数据平台部').f1).toBe(0);
  });

  it('answers - a Chinese yes/no gold is matched by the judgement the prediction opens with', () => {
    for (const form of ['是', '是的', '对', '是的。']) expect(goldJudgement(form)).toBe('yes');
    for (const form of ['不是', '否', '不', '不对']) expect(goldJudgement(form)).toBe('no');
    expect(goldJudgement('不丹国王')).toBeUndefined();
    expect(isJudgement('不是')).toBe(true);
    expect(isJudgement('Yes.')).toBe(true);
    expect(isJudgement('Yesterday')).toBe(false);
    expect(openingJudgement('不在同一个月 [1]')).toBe('no');
    expect(openingJudgement('“是的”，两件事都在五月')).toBe('yes');
    expect(openingJudgement('五月')).toBeUndefined();
    expect(scoreAnswer('是，都发生在2023年5月', '是的')).toEqual({ em: true, f1: 1 });
    expect(scoreAnswer('不是同一个月', '是的')).toEqual({ em: false, f1: 0 });
    expect(scoreAnswer('不是同一个月', '不是')).toEqual({ em: true, f1: 1 });
    // A prediction that names something instead of judging gets no credit for shared characters.
    expect(scoreAnswer('是在2023年', '不是')).toEqual({ em: false, f1: 0 });
    expect(scoreAnswer('2023年5月', '是的')).toEqual({ em: false, f1: 0 });
    // Openings that share a judgement's first character but judge nothing.
    for (const hedge of ['不确定两者是否在同一个月', '没有找到相关信息', '无法判断']) {
      expect(openingJudgement(hedge), hedge).toBeUndefined();
      expect(scoreAnswer(hedge, '不是').em, hedge).toBe(false);
    }
    for (const other of ['对于这两个事件，前者更早', '是否同月无法判断', '对不起，文档中没有相关信息'])
      expect(scoreAnswer(other, '是的').em, other).toBe(false);
    // A negation that affirms ("that is right").
    expect(openingJudgement('没错，两件事都发生在五月')).toBe('yes');
    expect(scoreAnswer('不错，两件事都在五月', '不是').em).toBe(false);
  });

  it('answers - an order question asks which of the things it names came first or last', () => {
    expect(asksOrder('北风实验室发布天穹项目和东港市元宵灯会哪个事件发生得更早？')).toBe(true);
    expect(asksOrder('两次发布中哪一次在先？')).toBe(true);
    expect(asksOrder('Which opened first, the mill or the bridge?')).toBe(true);
    expect(asksOrder('Who is older, Ada Lind or Bo Stern?')).toBe(true);
    // An order word without options to order, or 先 in 先生 ("Mr."), asks no order.
    expect(asksOrder('What was the first film of Ada Lind?')).toBe(false);
    expect(asksOrder('王先生在哪家公司工作？')).toBe(false);
    expect(asksOrder('北风实验室发布天穹项目和南湖大学举办春季运动会是在同一个月吗？')).toBe(false);
  });

  it('answers - the best score over the gold answer and its aliases counts', () => {
    expect(bestAnswerScore('bread', ['sourdough', 'bread'])).toEqual({ em: true, f1: 1 });
    expect(bestAnswerScore('rye bread', ['sourdough', 'bread']).f1).toBeCloseTo(2 / 3, 10);
    expect(bestAnswerScore('anything', [])).toEqual({ em: false, f1: 0 });
  });

  it('answers - the short answer is what precedes the first citation, none for an abstention', () => {
    expect(shortAnswer('Platform Engineering [2]. The project is owned by Mira Chen [1].', false)).toBe(
      'Platform Engineering',
    );
    expect(shortAnswer('数据平台部 [2]。李明隶属于数据平台部 [2]。', false)).toBe('数据平台部');
    expect(shortAnswer('No citation here.\nSecond line', false)).toBe('No citation here');
    expect(shortAnswer('Mira Chen [1].', true)).toBe('');
  });
});
