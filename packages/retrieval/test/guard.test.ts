import { CancelledError, DeadlineExceededError } from '@hopline/contracts';
import { describe, expect, it } from 'vitest';
import { createDeadlineGuard, inProcessGuard } from '../src/index.js';

describe('createDeadlineGuard', () => {
  const guard = createDeadlineGuard();

  it('guard - passes the result through', async () => {
    await expect(guard.call(async () => 42, { deadlineUnixMs: Date.now() + 1_000 })).resolves.toBe(42);
  });

  it('guard - a call past its deadline fails with DeadlineExceededError and its signal aborts', async () => {
    let seen: AbortSignal | undefined;
    const never = guard.call(
      (signal) => {
        seen = signal;
        return new Promise<never>(() => undefined);
      },
      { deadlineUnixMs: Date.now() + 20 },
    );
    await expect(never).rejects.toBeInstanceOf(DeadlineExceededError);
    expect(seen?.aborted).toBe(true);
  });

  it('guard - a deadline already passed fails without running the work', async () => {
    let ran = false;
    await expect(guard.call(async () => (ran = true), { deadlineUnixMs: Date.now() - 1 })).rejects.toBeInstanceOf(
      DeadlineExceededError,
    );
    expect(ran).toBe(false);
  });

  it('guard - the caller cancelling fails the call with CancelledError', async () => {
    const controller = new AbortController();
    const pending = guard.call(() => new Promise<never>(() => undefined), {
      deadlineUnixMs: Date.now() + 10_000,
      signal: controller.signal,
    });
    controller.abort();
    await expect(pending).rejects.toBeInstanceOf(CancelledError);
  });

  it("guard - the work's own error is passed through", async () => {
    await expect(
      guard.call(async () => Promise.reject(new Error('boom')), { deadlineUnixMs: Date.now() + 1_000 }),
    ).rejects.toThrow('boom');
  });
});

describe('inProcessGuard', () => {
  it("guard - in-process work runs with the caller's own signal and its result is passed through", async () => {
    const caller = new AbortController();
    let seen: AbortSignal | undefined;
    const result = await inProcessGuard.call(
      async (signal) => {
        seen = signal;
        return 42;
      },
      { deadlineUnixMs: Date.now() + 1_000, signal: caller.signal },
    );
    expect(result).toBe(42);
    expect(seen).toBe(caller.signal);
  });

  it('guard - in-process work is not started past its deadline or after the caller cancelled', async () => {
    let ran = false;
    const work = async () => (ran = true);
    await expect(inProcessGuard.call(work, { deadlineUnixMs: Date.now() - 1 })).rejects.toBeInstanceOf(
      DeadlineExceededError,
    );
    const cancelled = new AbortController();
    cancelled.abort();
    await expect(
      inProcessGuard.call(work, { deadlineUnixMs: Date.now() + 1_000, signal: cancelled.signal }),
    ).rejects.toBeInstanceOf(CancelledError);
    expect(ran).toBe(false);
  });

  it("guard - in-process work's own error is passed through", async () => {
    await expect(
      inProcessGuard.call(async () => Promise.reject(new Error('boom')), { deadlineUnixMs: Date.now() + 1_000 }),
    ).rejects.toThrow('boom');
  });
});
