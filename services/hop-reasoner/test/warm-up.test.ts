import { describe, expect, it } from 'vitest';
import { warmUpCalls } from '../src/warm-up.js';

describe('hop-reasoner warm-up', () => {
  it('runs the whole loop on its invented questions in both scripts, hop after hop, to a written answer', async () => {
    const outcomes = (await Promise.all(warmUpCalls().map((call) => call()))) as Array<{
      done: { answer: string; hops: number };
    }>;
    expect(outcomes).toHaveLength(2);
    for (const { done } of outcomes) expect(done.hops).toBeGreaterThanOrEqual(2);
    expect(outcomes[0]?.done.answer).toMatch(/^Sellen \[2\]/);
    // The Chinese question's second hop is read too: its answer cites the first hop's document.
    expect(outcomes[1]?.done.answer).toMatch(/[\u4e00-\u9fff].*\[1\]/);
  });
});
