import { describe, expect, it } from 'vitest';
import { percentile, scoreQuestion, summarizeByDataset } from '../src/index.js';

describe('metrics', () => {
  it('metrics - a paragraph counts as found when any of its chunks is in the top k', () => {
    expect(scoreQuestion(['a', 'b'], ['a', 'a', 'x', 'b'], 4)).toEqual({ gold: 2, found: 2, chainComplete: true });
    expect(scoreQuestion(['a', 'b'], ['a', 'a', 'x', 'b'], 3)).toEqual({ gold: 2, found: 1, chainComplete: false });
  });

  it('metrics - percentiles interpolate between ranks', () => {
    expect(percentile([4, 1, 3, 2], 50)).toBe(2.5);
    expect(percentile([1, 2, 3, 4, 5], 95)).toBeCloseTo(4.8, 10);
    expect(percentile([], 50)).toBeNaN();
  });

  it('metrics - chain recall is per question, support recall per gold paragraph, both per dataset too', () => {
    const { overall, byDataset } = summarizeByDataset(
      [
        { id: '1', dataset: 'hotpotqa', goldDocIds: ['a', 'b'], rankedDocIds: ['a', 'b'], latencyMs: 1 },
        { id: '2', dataset: 'hotpotqa', goldDocIds: ['c', 'd'], rankedDocIds: ['c'], latencyMs: 3 },
        { id: '3', dataset: 'musique', goldDocIds: ['e', 'f', 'g', 'h'], rankedDocIds: [], latencyMs: 2 },
      ],
      10,
    );
    expect(overall).toEqual({ questions: 3, chainRecall: 33.3, supportRecall: 37.5, p50Ms: 2, p95Ms: 2.9 });
    expect(byDataset.hotpotqa).toMatchObject({ questions: 2, chainRecall: 50, supportRecall: 75 });
    expect(byDataset.musique).toMatchObject({ questions: 1, chainRecall: 0, supportRecall: 0 });
  });
});
