import { describe, expect, it } from 'vitest';
import type { ReasoningSwitch } from '../src/index.js';
import { framedInTime } from '../src/offline/question.js';
import { chunk } from './support/chunks.js';
import { askAsOneLookup } from './support/fixtures.js';

// Invented news summaries without titles: the event that sets the day, what was announced that
// day, and a later report that names the first event's parties (a bridge a hop could follow).
const corpus = [
  chunk('c-expo', '', '2031年5月8日，青川博览会在临江开幕，吸引了三百家企业参展，博览会由临江商会主办。'),
  chunk('c-water', '', '2031年5月8日，临江市水务局宣布启动东湖引水工程，工程预计两年内完工。'),
  chunk('c-later', '', '2031年6月2日，临江商会召集参展企业举行座谈会，讨论青川博览会之后的合作项目。'),
];

const answerOf = (question: string, switchedOff: ReasoningSwitch[] = []) =>
  askAsOneLookup(corpus, question, { topK: 3, switchedOff });

describe('time frames - an event that only sets the time of a question names no bridge', () => {
  it('time frames - "X当天，…" and "On the day X …, …" set a time; a date asked of X does not', () => {
    expect(framedInTime('青川博览会开幕当天，临江市水务局宣布了什么？')).toBe(true);
    expect(framedInTime('青川博览会开幕当月，临江发生了什么？')).toBe(true);
    expect(framedInTime('On the day the Qingchuan Expo opened, what did the water bureau announce?')).toBe(true);
    expect(framedInTime('青川博览会是哪一天开幕的？')).toBe(false);
    expect(framedInTime('What happened on the day of the Qingchuan Expo?')).toBe(false);
  });

  it("time frames - the first hop is done: the event's words, which the answer's own chunk does not state, send it nowhere", async () => {
    const { trace } = await answerOf('青川博览会开幕当天，临江市水务局宣布了什么？');
    expect(trace.hops).toHaveLength(1);
    expect(trace.hops[0]?.answer?.done).toBe(true);
    expect(trace.citations.map((citation) => citation.chunkId)).toContain('c-water');
  });

  it("time frames - switched off, the event's words leave the first hop looking for a bridge", async () => {
    const { trace } = await answerOf('青川博览会开幕当天，临江市水务局宣布了什么？', ['timeFrames']);
    expect(trace.hops[0]?.answer?.done).toBe(false);
  });
});
