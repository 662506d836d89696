import {
  BreakerOpenError,
  CancelledError,
  DeadlineExceededError,
  HoplineError,
  RemoteError,
  UnavailableError,
  ValidationError,
} from '@hopline/contracts';
import { createMetrics } from '@hopline/telemetry';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createGuard, DEFAULT_BREAKER, type BreakerState, type Guard, type GuardOptions } from '../src/index.js';

const guards: Guard[] = [];
afterEach(() => {
  for (const guard of guards.splice(0)) guard.shutdown();
});

function guardFor(overrides: Partial<GuardOptions> = {}): Guard {
  const guard = createGuard({
    downstream: 'reranker',
    breaker: {
      errorThresholdPercentage: 50,
      volumeThreshold: 3,
      resetTimeoutMs: 60_000,
      rollingCountTimeoutMs: 10_000,
    },
    ...overrides,
  });
  guards.push(guard);
  return guard;
}

const soon = (ms = 5_000) => ({ deadlineUnixMs: Date.now() + ms });

/** Work that never settles by itself and rejects only when its signal aborts, the way a well-behaved client does. */
const hangUntilAborted = (signal: AbortSignal) =>
  new Promise<never>((_resolve, reject) =>
    signal.addEventListener('abort', () => reject(new Error('AbortError: client gave up')), { once: true }),
  );

/** A counter's value for exactly these labels (the service label aside). */
async function metricValue(
  metrics: ReturnType<typeof createMetrics>,
  name: string,
  labels: Record<string, string>,
): Promise<number> {
  const metric = (await metrics.registry.getMetricsAsJSON()).find((m) => m.name === name);
  const sample = metric?.values.find((value) =>
    Object.entries(labels).every(([key, wanted]) => value.labels[key] === wanted),
  );
  return sample?.value ?? Number.NaN;
}

async function failTimes(guard: Guard, times: number, error: () => Error): Promise<void> {
  for (let i = 0; i < times; i += 1) {
    await guard.call(async () => Promise.reject(error()), soon()).catch(() => undefined);
  }
}

describe('guard - deadlines and signals', () => {
  it("guard - returns the work's value and hands it a live signal", async () => {
    const guard = guardFor();
    let seen: AbortSignal | undefined;
    await expect(guard.call(async (signal) => ((seen = signal), 'ok'), soon())).resolves.toBe('ok');
    expect(seen?.aborted).toBe(false);
    expect(guard.stats()).toMatchObject({ calls: 1, successes: 1, failures: 0 });
  });

  it("guard - a call past its capped timeout rejects with DeadlineExceededError and aborts the work's signal", async () => {
    const guard = guardFor();
    let workSignal: AbortSignal | undefined;
    const started = Date.now();
    const error = await guard
      .call((signal) => ((workSignal = signal), hangUntilAborted(signal)), {
        deadlineUnixMs: Date.now() + 60_000,
        capMs: 40,
      })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DeadlineExceededError);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(workSignal?.aborted).toBe(true);
    expect(workSignal?.reason).toBe(error);
    expect(guard.stats()).toMatchObject({ failures: 1, timeouts: 1 });
  });

  it('guard - work that ignores its signal still cannot hold the caller past the deadline', async () => {
    const guard = guardFor();
    const error = await guard
      .call(() => new Promise<never>(() => undefined), { deadlineUnixMs: Date.now() + 40 })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DeadlineExceededError);
  });

  it('guard - a deadline already passed rejects without calling the work', async () => {
    const guard = guardFor();
    const work = vi.fn(async () => 'never');
    await expect(guard.call(work, { deadlineUnixMs: Date.now() - 1 })).rejects.toBeInstanceOf(DeadlineExceededError);
    expect(work).not.toHaveBeenCalled();
    expect(guard.stats()).toMatchObject({ calls: 1, skipped: 1, failures: 0 });
  });

  it("guard - the caller's abort cancels the work's signal and rejects with CancelledError, without counting a failure", async () => {
    const guard = guardFor();
    const caller = new AbortController();
    let workSignal: AbortSignal | undefined;
    const call = guard.call((signal) => ((workSignal = signal), hangUntilAborted(signal)), {
      ...soon(),
      signal: caller.signal,
    });
    await vi.waitFor(() => expect(workSignal).toBeDefined());
    caller.abort();
    await expect(call).rejects.toBeInstanceOf(CancelledError);
    expect(workSignal?.reason).toBeInstanceOf(CancelledError);
    expect(guard.stats()).toMatchObject({ cancelled: 1, failures: 0 });
  });

  it("guard - a caller's signal that aborts at the call's deadline, before the guard's timer, is a timeout that counts towards opening", async () => {
    // Fake timers: the caller's timer, set first for the same moment, deterministically runs first.
    vi.useFakeTimers();
    try {
      const guard = guardFor();
      for (let i = 0; i < 3; i += 1) {
        // A gRPC handler's signal aborts at the inbound deadline, the one it passes to the guard.
        const deadlineUnixMs = Date.now() + 100;
        const inbound = new AbortController();
        setTimeout(() => inbound.abort(new CancelledError('the client cancelled the call')), 100);
        const call = guard.call(hangUntilAborted, { deadlineUnixMs, signal: inbound.signal }).catch((e: unknown) => e);
        await vi.advanceTimersByTimeAsync(100);
        expect(await call).toBeInstanceOf(DeadlineExceededError);
      }
      expect(guard.state).toBe('open');
      expect(guard.stats()).toMatchObject({ failures: 3, timeouts: 3, cancelled: 0 });
    } finally {
      vi.useRealTimers();
    }
  });

  it('guard - a caller signal aborted beforehand never starts the work', async () => {
    const guard = guardFor();
    const caller = new AbortController();
    caller.abort();
    const work = vi.fn(async () => 'never');
    await expect(guard.call(work, { ...soon(), signal: caller.signal })).rejects.toBeInstanceOf(CancelledError);
    expect(work).not.toHaveBeenCalled();
  });

  it('guard - per-call signals are independent: aborting one call leaves its neighbour running', async () => {
    const guard = guardFor();
    const first = new AbortController();
    const signals: AbortSignal[] = [];
    let finishSecond: (value: string) => void = () => undefined;
    const a = guard.call((signal) => (signals.push(signal), hangUntilAborted(signal)), {
      ...soon(),
      signal: first.signal,
    });
    const b = guard.call(
      (signal) => (signals.push(signal), new Promise<string>((resolve) => (finishSecond = resolve))),
      soon(),
    );
    await vi.waitFor(() => expect(signals).toHaveLength(2));
    first.abort();
    await expect(a).rejects.toBeInstanceOf(CancelledError);
    expect(signals[1]?.aborted).toBe(false);
    finishSecond('second answered');
    await expect(b).resolves.toBe('second answered');
  });

  it('guard - an unknown thrown error becomes an internal HoplineError that counts as a failure', async () => {
    const guard = guardFor();
    const error = await guard
      .call(async () => {
        throw new TypeError('socket hang up');
      }, soon())
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HoplineError);
    expect((error as HoplineError).code).toBe('internal');
    expect(guard.stats().failures).toBe(1);
  });

  it('guard - the bulkhead rejects calls beyond maxConcurrent with resource_exhausted', async () => {
    const guard = guardFor({ maxConcurrent: 1 });
    let release: () => void = () => undefined;
    const first = guard.call(() => new Promise<void>((resolve) => (release = resolve)), soon());
    const second = await guard.call(async () => 'squeezed in', soon()).catch((e: unknown) => e);
    expect((second as HoplineError).code).toBe('resource_exhausted');
    release();
    await first;
    await expect(guard.call(async () => 'room again', soon())).resolves.toBe('room again');
    expect(guard.stats()).toMatchObject({ rejected: 1, failures: 0 });
  });
});

describe('guard - breaker', () => {
  it('guard - opens after enough infrastructure failures, then rejects fast without calling the work', async () => {
    const metrics = createMetrics('hop-reasoner', { defaultMetrics: false });
    const warnings: string[] = [];
    const guard = guardFor({ metrics, logger: { warn: (msg) => warnings.push(msg), info: () => undefined } });
    const states: BreakerState[] = [];
    guard.onStateChange((state) => states.push(state));
    await failTimes(guard, 3, () => new UnavailableError('connection refused'));
    expect(guard.state).toBe('open');
    expect(states).toEqual(['open']);
    expect(warnings).toEqual(['circuit breaker opened']);

    const work = vi.fn(async () => 'never');
    const started = Date.now();
    const error = await guard.call(work, soon()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BreakerOpenError);
    // Far below the 5 s deadline: it did not wait for anything.
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(work).not.toHaveBeenCalled();
    expect(guard.stats()).toMatchObject({ state: 'open', failures: 3, rejected: 1 });

    const exposition = await metrics.registry.metrics();
    expect(exposition).toContain('hopline_breaker_state{downstream="reranker",service="hop-reasoner"} 2');
    expect(exposition).toContain(
      'hopline_breaker_transitions_total{downstream="reranker",to="open",service="hop-reasoner"} 1',
    );
  });

  it('guard - close ends an open breaker at once: the next call reaches the work', async () => {
    const guard = guardFor();
    const states: BreakerState[] = [];
    guard.onStateChange((state) => states.push(state));
    await failTimes(guard, 3, () => new UnavailableError('connection refused'));
    expect(guard.state).toBe('open');
    guard.close();
    expect(guard.state).toBe('closed');
    expect(await guard.call(async () => 'reached', soon())).toBe('reached');
    expect(states).toEqual(['open', 'closed']);
  });

  it('guard - stays closed below the volume threshold', async () => {
    const guard = guardFor();
    await failTimes(guard, 2, () => new UnavailableError('connection refused'));
    expect(guard.state).toBe('closed');
  });

  it('guard - validation errors and errors relayed from further down never open it, and pass through unchanged', async () => {
    const guard = guardFor();
    const relayed = new RemoteError('deadline_exceeded', 'retrieval-worker timed out behind the reranker');
    await failTimes(guard, 4, () => new ValidationError('query is empty'));
    await failTimes(guard, 4, () => relayed);
    expect(guard.state).toBe('closed');
    await expect(guard.call(async () => Promise.reject(relayed), soon())).rejects.toBe(relayed);
    expect(guard.stats()).toMatchObject({ failures: 0, ignoredErrors: 9 });
  });

  it('guard - caller cancellations never open it', async () => {
    const guard = guardFor();
    for (let i = 0; i < 4; i += 1) {
      const caller = new AbortController();
      const call = guard.call(hangUntilAborted, { ...soon(), signal: caller.signal });
      caller.abort();
      await expect(call).rejects.toBeInstanceOf(CancelledError);
    }
    expect(guard.state).toBe('closed');
  });

  it('guard - half-open lets one trial through: success closes the breaker', async () => {
    const metrics = createMetrics('hop-reasoner', { defaultMetrics: false });
    const guard = guardFor({
      metrics,
      breaker: { errorThresholdPercentage: 50, volumeThreshold: 2, resetTimeoutMs: 50, rollingCountTimeoutMs: 10_000 },
    });
    const states: BreakerState[] = [];
    guard.onStateChange((state) => states.push(state));
    await failTimes(guard, 2, () => new UnavailableError('down'));
    expect(guard.state).toBe('open');
    await vi.waitFor(() => expect(guard.state).toBe('halfOpen'), { timeout: 2_000, interval: 10 });
    await expect(guard.call(async () => 'recovered', soon())).resolves.toBe('recovered');
    expect(guard.state).toBe('closed');
    expect(states).toEqual(['open', 'halfOpen', 'closed']);
    expect(await metrics.registry.metrics()).toContain(
      'hopline_breaker_state{downstream="reranker",service="hop-reasoner"} 0',
    );
  });

  it('guard - half-open: a failed trial opens the breaker again', async () => {
    const guard = guardFor({
      breaker: { errorThresholdPercentage: 50, volumeThreshold: 2, resetTimeoutMs: 50, rollingCountTimeoutMs: 10_000 },
    });
    await failTimes(guard, 2, () => new UnavailableError('down'));
    await vi.waitFor(() => expect(guard.state).toBe('halfOpen'), { timeout: 2_000, interval: 10 });
    await expect(
      guard.call(async () => Promise.reject(new UnavailableError('still down')), soon()),
    ).rejects.toBeInstanceOf(UnavailableError);
    expect(guard.state).toBe('open');
  });

  it('guard - half-open: a trial its caller cancels proves nothing, so it does not close the breaker', async () => {
    const guard = guardFor({
      breaker: { errorThresholdPercentage: 50, volumeThreshold: 2, resetTimeoutMs: 50, rollingCountTimeoutMs: 10_000 },
    });
    const states: BreakerState[] = [];
    guard.onStateChange((state) => states.push(state));
    await failTimes(guard, 2, () => new UnavailableError('down'));
    await vi.waitFor(() => expect(guard.state).toBe('halfOpen'), { timeout: 2_000, interval: 10 });
    const caller = new AbortController();
    let started = false;
    const trial = guard.call((signal) => ((started = true), hangUntilAborted(signal)), {
      ...soon(),
      signal: caller.signal,
    });
    await vi.waitFor(() => expect(started).toBe(true));
    caller.abort();
    await expect(trial).rejects.toBeInstanceOf(CancelledError);
    expect(guard.state).not.toBe('closed');
    expect(states).toEqual(['open', 'halfOpen', 'open']);
    // The next trial still decides.
    await vi.waitFor(() => expect(guard.state).toBe('halfOpen'), { timeout: 2_000, interval: 10 });
    await expect(guard.call(async () => 'recovered', soon())).resolves.toBe('recovered');
    expect(guard.state).toBe('closed');
  });

  it('guard - half-open: a call from before the breaker opened, cancelled now, neither closes it nor takes the trial', async () => {
    const guard = guardFor({
      breaker: { errorThresholdPercentage: 50, volumeThreshold: 2, resetTimeoutMs: 50, rollingCountTimeoutMs: 10_000 },
    });
    const states: BreakerState[] = [];
    guard.onStateChange((state) => states.push(state));
    const straggler = new AbortController();
    const stuck = guard.call(hangUntilAborted, { ...soon(), signal: straggler.signal });
    await failTimes(guard, 2, () => new UnavailableError('down'));
    await vi.waitFor(() => expect(guard.state).toBe('halfOpen'), { timeout: 2_000, interval: 10 });
    straggler.abort();
    await expect(stuck).rejects.toBeInstanceOf(CancelledError);
    expect(guard.state).toBe('halfOpen');
    // The trial is still to come, and it alone decides.
    const trials: boolean[] = [];
    await guard.call(async (_signal, attempt) => (trials.push(attempt.trial), 'recovered'), soon());
    expect(trials).toEqual([true]);
    expect(states).toEqual(['open', 'halfOpen', 'closed']);
    expect(guard.stats()).toMatchObject({ successes: 1, cancelled: 1 });
  });

  it('guard - counts the failures the breaker counted, by the state it was in', async () => {
    const metrics = createMetrics('hop-reasoner', { defaultMetrics: false });
    const guard = guardFor({
      metrics,
      breaker: {
        errorThresholdPercentage: 50,
        volumeThreshold: 10,
        resetTimeoutMs: 500,
        rollingCountTimeoutMs: 10_000,
        consecutiveFailures: 2,
      },
    });
    const failures = async (state: BreakerState) =>
      metricValue(metrics, 'hopline_breaker_failures_total', { downstream: 'reranker', state });
    expect(await failures('closed')).toBe(0);

    // A call still in flight when the breaker opens, and one its caller cancels, which is no failure.
    let failLate: (error: Error) => void = () => undefined;
    const late = guard.call(() => new Promise<never>((_resolve, reject) => (failLate = reject)), soon());
    const caller = new AbortController();
    const cancelled = guard.call(hangUntilAborted, { ...soon(), signal: caller.signal });
    caller.abort();
    await expect(cancelled).rejects.toBeInstanceOf(CancelledError);
    await failTimes(guard, 2, () => new UnavailableError('down'));
    expect(guard.state).toBe('open');
    failLate(new UnavailableError('down'));
    await expect(late).rejects.toBeInstanceOf(UnavailableError);

    // A failed trial, then a cancelled one: the breaker counts both and opens again each time.
    await vi.waitFor(() => expect(guard.state).toBe('halfOpen'), { timeout: 5_000, interval: 10 });
    await failTimes(guard, 1, () => new UnavailableError('still down'));
    await vi.waitFor(() => expect(guard.state).toBe('halfOpen'), { timeout: 5_000, interval: 10 });
    const trialCaller = new AbortController();
    const trial = guard.call(hangUntilAborted, { ...soon(), signal: trialCaller.signal });
    trialCaller.abort();
    await expect(trial).rejects.toBeInstanceOf(CancelledError);
    expect(guard.state).toBe('open');

    expect(await failures('closed')).toBe(2);
    expect(await failures('open')).toBe(1);
    expect(await failures('halfOpen')).toBe(2);
    // The guard's own stat leaves the cancelled trial out.
    expect(guard.stats()).toMatchObject({ failures: 4, cancelled: 2 });
  });

  it('guard - the half-open trial, and only it, is told it is the trial', async () => {
    const guard = guardFor({
      breaker: { errorThresholdPercentage: 50, volumeThreshold: 2, resetTimeoutMs: 50, rollingCountTimeoutMs: 10_000 },
    });
    const seen: boolean[] = [];
    const record = async (_signal: AbortSignal, attempt: { trial: boolean }) => {
      seen.push(attempt.trial);
      return 'ok';
    };
    await guard.call(record, soon());
    await failTimes(guard, 2, () => new UnavailableError('down'));
    await vi.waitFor(() => expect(guard.state).toBe('halfOpen'), { timeout: 2_000, interval: 10 });
    await guard.call(record, soon());
    await guard.call(record, soon());
    expect(seen).toEqual([false, true, false]);
  });

  it('guard - failures in a row open it even when earlier successes keep their share under the threshold', async () => {
    const consecutive = guardFor({
      breaker: { ...DEFAULT_BREAKER, resetTimeoutMs: 60_000, consecutiveFailures: 2 },
    });
    const shareOnly = guardFor();
    for (const guard of [consecutive, shareOnly]) {
      for (let i = 0; i < 10; i += 1) await guard.call(async () => 'fine', soon());
      for (let i = 0; i < 2; i += 1) {
        await expect(
          guard.call(hangUntilAborted, { deadlineUnixMs: Date.now() + 60_000, capMs: 20 }),
        ).rejects.toBeInstanceOf(DeadlineExceededError);
      }
    }
    expect(consecutive.state).toBe('open');
    expect(shareOnly.state).toBe('closed');
  });

  it('guard - an unsubscribed listener hears nothing more', async () => {
    const guard = guardFor({
      breaker: {
        errorThresholdPercentage: 50,
        volumeThreshold: 1,
        resetTimeoutMs: 60_000,
        rollingCountTimeoutMs: 10_000,
      },
    });
    const heard: BreakerState[] = [];
    const unsubscribe = guard.onStateChange((state) => heard.push(state));
    unsubscribe();
    await failTimes(guard, 1, () => new UnavailableError('down'));
    expect(guard.state).toBe('open');
    expect(heard).toEqual([]);
  });

  it('guard - timeouts count towards opening', async () => {
    const guard = guardFor({
      breaker: {
        errorThresholdPercentage: 50,
        volumeThreshold: 2,
        resetTimeoutMs: 60_000,
        rollingCountTimeoutMs: 10_000,
      },
    });
    for (let i = 0; i < 2; i += 1) {
      await expect(
        guard.call(hangUntilAborted, { deadlineUnixMs: Date.now() + 60_000, capMs: 20 }),
      ).rejects.toBeInstanceOf(DeadlineExceededError);
    }
    expect(guard.state).toBe('open');
  });
});

describe('guard - a breaker that closed again', () => {
  const breaker = { errorThresholdPercentage: 50, volumeThreshold: 4, rollingCountTimeoutMs: 10_000 };
  const timeOut = (guard: Guard) =>
    guard.call(hangUntilAborted, { deadlineUnixMs: Date.now() + 60_000, capMs: 10 }).catch(() => undefined);

  it('guard - a breaker closed by a good trial opens again when the downstream then fails every call: the calls it turned away while open do not count as answered', async () => {
    const guard = guardFor({ breaker: { ...breaker, resetTimeoutMs: 50 } });
    for (let i = 0; i < 4; i += 1) await timeOut(guard);
    expect(guard.state).toBe('open');
    for (let i = 0; i < 20; i += 1) {
      await expect(guard.call(async () => 'never', soon())).rejects.toBeInstanceOf(BreakerOpenError);
    }
    await vi.waitFor(() => expect(guard.state).toBe('halfOpen'), { timeout: 2_000, interval: 10 });
    await guard.call(async () => 'fine', soon());
    expect(guard.state).toBe('closed');
    for (let i = 0; i < 10; i += 1) await timeOut(guard);
    expect(guard.state).toBe('open');
  });

  it('guard - consecutiveFailures: an answer about the request from a live downstream in between ends the run of failures', async () => {
    const guard = guardFor({
      breaker: { ...breaker, resetTimeoutMs: 60_000, volumeThreshold: 1_000, consecutiveFailures: 2 },
    });
    await timeOut(guard);
    await expect(
      guard.call(async () => Promise.reject(new ValidationError('bad query')), soon()),
    ).rejects.toBeInstanceOf(ValidationError);
    await timeOut(guard);
    expect(guard.state).toBe('closed');
    await timeOut(guard);
    expect(guard.state).toBe('open');
  });
});
