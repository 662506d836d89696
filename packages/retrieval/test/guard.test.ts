import { CancelledError, DeadlineExceededError } from '@hopline/contracts';
import { describe, expect, it } from 'vitest';
import { createDeadlineGuard } from '../src/index.js';

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
