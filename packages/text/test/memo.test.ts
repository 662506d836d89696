import { describe, expect, it } from 'vitest';
import { createTokenizer, memoizedTokenizer, type Tokenizer } from '../src/index.js';

/** A tokenizer that counts the texts it segments. */
function counting(): Tokenizer & { calls: string[] } {
  const inner = createTokenizer();
  const calls: string[] = [];
  return {
    calls,
    version: inner.version,
    tokenize(text) {
      calls.push(text);
      return inner.tokenize(text);
    },
  };
}

describe('memoized tokenizer', () => {
  it('memoized tokenizer - a text seen before is not segmented again, and gives the same tokens', () => {
    const inner = counting();
    const tokenizer = memoizedTokenizer(inner);
    const first = tokenizer.tokenize('天穹项目的负责人属于哪个部门');
    expect(tokenizer.tokenize('天穹项目的负责人属于哪个部门')).toEqual(first);
    expect(first).toEqual(createTokenizer().tokenize('天穹项目的负责人属于哪个部门'));
    expect(inner.calls).toHaveLength(1);
  });

  it('memoized tokenizer - callers share one frozen array: none can change what the next one gets', () => {
    const tokenizer = memoizedTokenizer(createTokenizer());
    const first = tokenizer.tokenize('players were playing');
    expect(() => (first as string[]).push('intruder')).toThrow(TypeError);
    expect(tokenizer.tokenize('players were playing')).toBe(first);
    expect(first).toEqual(['player', 'play']);
  });

  it('memoized tokenizer - past its size it forgets the text used longest ago, not the one used last', () => {
    const inner = counting();
    const tokenizer = memoizedTokenizer(inner, 2);
    tokenizer.tokenize('alpha');
    tokenizer.tokenize('beta');
    tokenizer.tokenize('alpha'); // used again: beta is now the oldest
    tokenizer.tokenize('gamma'); // forgets beta
    tokenizer.tokenize('alpha');
    tokenizer.tokenize('beta');
    expect(inner.calls).toEqual(['alpha', 'beta', 'gamma', 'beta']);
  });

  it('memoized tokenizer - it holds no more texts than its size', () => {
    const inner = counting();
    const tokenizer = memoizedTokenizer(inner, 4);
    for (const text of ['alpha', 'beta', 'gamma', 'delta', 'alpha', 'epsilon', 'zeta', 'eta', 'theta', 'alpha']) {
      tokenizer.tokenize(text);
    }
    // alpha, used again before four newer texts came, is kept once; not after four more.
    expect(inner.calls).toEqual(['alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta', 'eta', 'theta', 'alpha']);
  });
});
