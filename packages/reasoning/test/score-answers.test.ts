import { describe, expect, it } from 'vitest';
import { readTypedAnswer } from '../src/offline/answers.js';
import { answerType } from '../src/offline/question.js';
import { chunk } from './support/chunks.js';

describe("score answers - a question asking for a score is answered by the two sides' numbers", () => {
  it('score answers - "score" and 比分 ask for a score; "how many" still asks for a count', () => {
    expect(answerType('What was the score of the 1998 Tern Bay final?')).toBe('score');
    expect(answerType('鹰队对猛虎队的比赛比分是多少？')).toBe('number');
    expect(answerType('鹰队和猛虎队的决赛比分是什么？')).toBe('score');
    expect(answerType('How many points did the Terns score in the final?')).toBe('number');
  });

  it('score answers - a score is read as the sentence writes it, never a span of years or a decimal', () => {
    const read = (text: string) =>
      readTypedAnswer('score', [chunk('c-final', 'Tern Bay Cup', text)], ['score', 'final'])?.answer;
    expect(read('The Terns, champions from 1994–1998, beat the Gulls 2–0 in the final.')).toBe('2–0');
    expect(read('决赛中鹰队以4比2战胜猛虎队。')).toBe('4比2');
    expect(read('The final drew 12,400 people and was won by 3.5 points.')).toBeUndefined();
  });
});
