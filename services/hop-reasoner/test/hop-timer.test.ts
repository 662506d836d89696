import { createMetrics } from '@hopline/telemetry';
import { describe, expect, it } from 'vitest';
import { hopTimer } from '../src/hop-timer.js';

const base = { questionId: 'q1' };

describe('hop timer', () => {
  it('hop duration - each hop is observed from its hop_started to its hop_answer, by hop number, by the events own clock', async () => {
    const metrics = createMetrics('hop-reasoner', { defaultMetrics: false });
    const observe = hopTimer(metrics);
    observe({ ...base, atUnixMs: 1_000, event: 'hopStarted', hopStarted: { hop: 1, maxHops: 3, subQuestion: 'a' } });
    observe({ ...base, atUnixMs: 1_250, event: 'hopAnswer', hopAnswer: { hop: 1, answer: 'x' } });
    observe({ ...base, atUnixMs: 1_300, event: 'hopStarted', hopStarted: { hop: 2, maxHops: 3, subQuestion: 'b' } });
    // A hop that never answered (the question failed) is not observed.
    observe({ ...base, atUnixMs: 1_400, event: 'token', token: { text: 'x' } });

    const values = (await metrics.hopDuration.get()).values;
    const sum = (hop: string) =>
      values.find((value) => value.metricName === 'hopline_hop_duration_seconds_sum' && value.labels.hop === hop)
        ?.value;
    expect(sum('1')).toBeCloseTo(0.25, 6);
    expect(sum('2')).toBeUndefined();
  });
});
