import { CancelledError, UnavailableError, ValidationError } from '@hopline/contracts';
import { describe, expect, it, vi } from 'vitest';
import { hedged, LatencyWindow } from '../src/index.js';

/** An attempt that never answers by itself and reports when its signal aborts. */
const hanging = (aborted: AbortSignal[]) => (signal: AbortSignal) =>
  new Promise<string>((_resolve, reject) =>
    signal.addEventListener(
      'abort',
      () => {
        aborted.push(signal);
        reject(new Error('aborted'));
      },
      { once: true },
    ),
  );

describe('hedge', () => {
  it('hedge - when the first attempt outlasts the delay a second starts; the first answer wins and the loser is aborted', async () => {
    const aborted: AbortSignal[] = [];
    const started: number[] = [];
    const outcome = await hedged(
      (attempt, signal) => {
        started.push(attempt);
        return attempt === 1 ? hanging(aborted)(signal) : Promise.resolve('second');
      },
      { delayMs: 20, signal: new AbortController().signal },
    );
    expect(outcome).toEqual({ value: 'second', winner: 2 });
    expect(started).toEqual([1, 2]);
    expect(aborted).toHaveLength(1);
  });

  it('hedge - the attempts of calls that answered are aborted with one reason, not an error made per call', async () => {
    const reasons: unknown[] = [];
    for (let call = 0; call < 2; call++) {
      await hedged(
        async (_attempt, signal) => {
          signal.addEventListener('abort', () => reasons.push(signal.reason), { once: true });
          return 'answer';
        },
        { delayMs: 1_000, signal: new AbortController().signal },
      );
    }
    expect(reasons).toHaveLength(2);
    expect(reasons[0]).toBeInstanceOf(CancelledError);
    expect(reasons[1]).toBe(reasons[0]);
  });

  it('hedge - a first attempt that answers in time is the only one', async () => {
    const started: number[] = [];
    const outcome = await hedged(
      async (attempt) => {
        started.push(attempt);
        return 'first';
      },
      { delayMs: 1_000, signal: new AbortController().signal },
    );
    expect(outcome).toEqual({ value: 'first', winner: 1 });
    expect(started).toEqual([1]);
  });

  it('hedge - an infrastructure failure starts the second attempt at once; an error about the request ends the call', async () => {
    const retried = await hedged(
      async (attempt) => {
        if (attempt === 1) throw new UnavailableError('replica gone');
        return 'second';
      },
      { delayMs: 60_000, signal: new AbortController().signal },
    );
    expect(retried.winner).toBe(2);

    const started: number[] = [];
    const refused = hedged(
      async (attempt) => {
        started.push(attempt);
        throw new ValidationError('bad query');
      },
      { delayMs: 60_000, signal: new AbortController().signal },
    );
    await expect(refused).rejects.toBeInstanceOf(ValidationError);
    expect(started).toEqual([1]);
  });

  it("hedge - the caller's abort ends both attempts with its reason", async () => {
    const aborted: AbortSignal[] = [];
    const caller = new AbortController();
    const call = hedged((_attempt, signal) => hanging(aborted)(signal), { delayMs: 5, signal: caller.signal });
    await new Promise((resolve) => setTimeout(resolve, 30));
    caller.abort();
    await expect(call).rejects.toBeInstanceOf(CancelledError);
    expect(aborted).toHaveLength(2);
  });

  it('latency window - the hedge delay is the recent p95, clamped, and the ceiling until enough samples are in', () => {
    const window = new LatencyWindow({ floorMs: 10, ceilingMs: 1_000, minSamples: 20, capacity: 100 });
    for (let i = 0; i < 19; i += 1) window.record(5);
    expect(window.hedgeDelayMs()).toBe(1_000);
    for (let i = 0; i < 81; i += 1) window.record(i < 76 ? 40 : 400);
    expect(window.hedgeDelayMs()).toBe(400);
    expect(window.hedgeDelayMs(300)).toBe(300);
    for (let i = 0; i < 100; i += 1) window.record(1);
    expect(window.hedgeDelayMs()).toBe(10);
  });

  it('latency window - its p95 follows the last `capacity` samples as old ones leave, without sorting for each call', () => {
    const capacity = 50;
    const window = new LatencyWindow({ floorMs: 0, ceilingMs: 1_000_000, minSamples: 1, capacity });
    // A fixed, scrambled sequence with repeats, so that evictions remove equal values too.
    let seed = 7;
    const latencies: number[] = [];
    const delays: number[] = [];
    const sort = vi.spyOn(Array.prototype, 'sort');
    for (let i = 0; i < 400; i += 1) {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      latencies.push(seed % 97);
      window.record(seed % 97);
      delays.push(window.hedgeDelayMs());
    }
    const sorts = sort.mock.calls.length;
    sort.mockRestore();
    expect(sorts).toBe(0);
    const p95Of = (recent: number[]) =>
      [...recent].sort((a, b) => a - b)[Math.min(recent.length - 1, Math.floor(recent.length * 0.95))];
    expect(delays).toEqual(latencies.map((_, i) => p95Of(latencies.slice(Math.max(0, i + 1 - capacity), i + 1))));
  });
});
