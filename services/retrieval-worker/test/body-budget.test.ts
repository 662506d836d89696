import { describe, expect, it } from 'vitest';
import { BodyBudget } from '../src/body-budget.js';

describe('retrieval-worker - the body budget', () => {
  it('body budget - takes what fits at once; the rest waits in order, and goes as releases make room', async () => {
    const budget = new BodyBudget(10);
    const order: string[] = [];
    const first = await budget.take(6);
    const second = budget.take(6).then((release) => (order.push('second'), release));
    const third = budget.take(1).then((release) => (order.push('third'), release));
    await new Promise((resolve) => setImmediate(resolve));
    // The third would fit, but does not pass the second, which waits before it.
    expect(order).toEqual([]);
    first();
    await Promise.all([second, third]);
    expect(order).toEqual(['second', 'third']);
  });

  it('body budget - a body larger than the whole budget goes once it is alone, and a release twice frees it once', async () => {
    const budget = new BodyBudget(10);
    const small = await budget.take(4);
    let huge: (() => void) | undefined;
    const waiting = budget.take(50).then((release) => (huge = release));
    await new Promise((resolve) => setImmediate(resolve));
    expect(huge).toBeUndefined();
    small();
    small();
    await waiting;
    let next: (() => void) | undefined;
    const after = budget.take(1).then((release) => (next = release));
    await new Promise((resolve) => setImmediate(resolve));
    expect(next).toBeUndefined();
    huge?.();
    await after;
    expect(next).toBeDefined();
  });
});
