import { describe, expect, it } from 'vitest';
import { citationSupport, citedClaims } from '../src/index.js';

const chunks = new Map([
  [1, { title: 'Project Atlas', text: 'The project is owned by Mira Chen, who approves every release.' }],
  [2, { title: 'Mira Chen', text: 'She belongs to the Platform Engineering department since 2026.' }],
]);

describe('citation support', () => {
  it('citations - each claim is the text before its citation, back to the previous one or its sentence start', () => {
    expect(citedClaims('Platform Engineering [2]. Owned by Mira Chen [1][2]. Joined in 2026. [2]')).toEqual([
      { claim: 'Platform Engineering', cited: [2] },
      { claim: 'Owned by Mira Chen', cited: [1, 2] },
      { claim: 'Joined in 2026.', cited: [2] },
    ]);
    expect(citedClaims('数据平台部 [2]。李明隶属于数据平台部 [1, 2]。')).toEqual([
      { claim: '数据平台部', cited: [2] },
      { claim: '李明隶属于数据平台部', cited: [1, 2] },
    ]);
    expect(citedClaims('No citations at all.')).toEqual([]);
  });

  it('citations - a claim is supported when the chunks it cites state its names and numbers', () => {
    const text = 'Platform Engineering [2]. The owner is Mira Chen [1]. She joined in 2031 [2]. It is big [1].';
    // "It is big" names nothing a reader could check: it is not counted either way.
    expect(citationSupport(text, (index) => chunks.get(index))).toEqual({ checked: 3, supported: 2 });
    expect(citationSupport('Platform Engineering [1].', (index) => chunks.get(index))).toEqual({
      checked: 1,
      supported: 0,
    });
    expect(citationSupport('Platform Engineering [7].', (index) => chunks.get(index))).toEqual({
      checked: 1,
      supported: 0,
    });
  });
});
