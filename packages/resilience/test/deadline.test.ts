import { CancelledError, DeadlineExceededError, ValidationError } from '@hopline/contracts';
import { describe, expect, it, vi } from 'vitest';
import { deadlineSignal, hopTimeoutMs, remainingMs } from '../src/index.js';

describe('deadline helpers', () => {
  it('deadline - remainingMs counts down to zero and never below', () => {
    expect(remainingMs(1_000, 400)).toBe(600);
    expect(remainingMs(1_000, 1_000)).toBe(0);
    expect(remainingMs(1_000, 5_000)).toBe(0);
  });

  it("deadline - hopTimeoutMs is what is left, capped by the call's own limit", () => {
    expect(hopTimeoutMs(10_000, 2_000, 9_000)).toBe(1_000);
    expect(hopTimeoutMs(10_000, 2_000, 1_000)).toBe(2_000);
    expect(hopTimeoutMs(10_000, Number.POSITIVE_INFINITY, 1_000)).toBe(9_000);
  });

  it('deadline - hopTimeoutMs throws DeadlineExceededError when nothing is left, unset (0) included', () => {
    expect(() => hopTimeoutMs(1_000, 500, 1_000)).toThrow(DeadlineExceededError);
    expect(() => hopTimeoutMs(0, 500)).toThrow(DeadlineExceededError);
  });

  it('deadline - a deadline that is not a number is a validation error', () => {
    expect(() => remainingMs(Number.NaN)).toThrow(ValidationError);
  });

  it('deadline - deadlineSignal aborts with DeadlineExceededError when the deadline passes', async () => {
    const signal = deadlineSignal(Date.now() + 30);
    expect(signal.aborted).toBe(false);
    await vi.waitFor(() => expect(signal.aborted).toBe(true), { timeout: 2_000, interval: 5 });
    expect(signal.reason).toBeInstanceOf(DeadlineExceededError);
  });

  it('deadline - deadlineSignal of a past deadline is already aborted', () => {
    const signal = deadlineSignal(Date.now() - 1);
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toBeInstanceOf(DeadlineExceededError);
  });

  it('deadline - deadlineSignal follows its parent: a HoplineError reason is kept, any other becomes a cancellation', () => {
    const parent = new AbortController();
    const signal = deadlineSignal(Date.now() + 60_000, parent.signal);
    parent.abort(new DeadlineExceededError('the question ran out of time'));
    expect(signal.reason).toBeInstanceOf(DeadlineExceededError);
    expect((signal.reason as Error).message).toBe('the question ran out of time');

    const plainParent = new AbortController();
    const child = deadlineSignal(Date.now() + 60_000, plainParent.signal);
    plainParent.abort();
    expect(child.reason).toBeInstanceOf(CancelledError);

    const alreadyAborted = new AbortController();
    alreadyAborted.abort();
    expect(deadlineSignal(Date.now() + 60_000, alreadyAborted.signal).aborted).toBe(true);
  });
});
