import { CancelledError, DeadlineExceededError, ValidationError } from '@hopline/contracts';
import { describe, expect, it, vi } from 'vitest';
import { getEventListeners } from 'node:events';
import { deadlineScope, downstreamDeadline, hopTimeoutMs, remainingMs, withDeadline } from '../src/index.js';

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

  it("deadline - downstreamDeadline keeps a fifth of what is left for the handler's fallback and reply, at most 250 ms", () => {
    expect(downstreamDeadline(10_500, 10_000)).toBe(10_400);
    expect(downstreamDeadline(40_000, 10_000)).toBe(39_750);
    expect(downstreamDeadline(10_000, 12_000)).toBe(10_000);
  });

  it('deadline - a deadline that is not a number is a validation error', () => {
    expect(() => remainingMs(Number.NaN)).toThrow(ValidationError);
  });

  it("deadline - a deadlineScope's signal aborts with DeadlineExceededError when the deadline passes", async () => {
    const { signal } = deadlineScope(Date.now() + 30);
    expect(signal.aborted).toBe(false);
    await vi.waitFor(() => expect(signal.aborted).toBe(true), { timeout: 2_000, interval: 5 });
    expect(signal.reason).toBeInstanceOf(DeadlineExceededError);
  });

  it('deadline - deadlineScope of a past deadline is already aborted', () => {
    const { signal } = deadlineScope(Date.now() - 1);
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toBeInstanceOf(DeadlineExceededError);
  });

  it('deadline - deadlineScope follows its parent: a HoplineError reason is kept, any other becomes a cancellation', () => {
    const parent = new AbortController();
    const { signal } = deadlineScope(Date.now() + 60_000, parent.signal);
    parent.abort(new DeadlineExceededError('the question ran out of time'));
    expect(signal.reason).toBeInstanceOf(DeadlineExceededError);
    expect((signal.reason as Error).message).toBe('the question ran out of time');

    const plainParent = new AbortController();
    const { signal: child } = deadlineScope(Date.now() + 60_000, plainParent.signal);
    plainParent.abort();
    expect(child.reason).toBeInstanceOf(CancelledError);

    const alreadyAborted = new AbortController();
    alreadyAborted.abort();
    expect(deadlineScope(Date.now() + 60_000, alreadyAborted.signal).signal.aborted).toBe(true);
  });

  it('deadline - a released scope leaves nothing on a long-lived parent, and its deadline no longer aborts it', async () => {
    const service = new AbortController();
    for (let question = 0; question < 50; question++) {
      await withDeadline(Date.now() + 60_000, service.signal, async (signal) => {
        expect(getEventListeners(service.signal, 'abort')).toHaveLength(1);
        return signal.aborted;
      });
    }
    expect(getEventListeners(service.signal, 'abort')).toHaveLength(0);

    const scope = deadlineScope(Date.now() + 20, service.signal);
    scope.release();
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(scope.signal.aborted).toBe(false);
  });

  it('deadline - a scope that reaches its deadline before its release leaves nothing on its parent', async () => {
    const service = new AbortController();
    const { signal } = deadlineScope(Date.now() + 20, service.signal);
    expect(getEventListeners(service.signal, 'abort')).toHaveLength(1);
    await vi.waitFor(() => expect(signal.aborted).toBe(true), { timeout: 2_000, interval: 5 });
    expect(getEventListeners(service.signal, 'abort')).toHaveLength(0);
    expect(getEventListeners(signal, 'abort')).toHaveLength(0);
  });

  it('deadline - withDeadline releases its scope when the work fails too', async () => {
    const service = new AbortController();
    await expect(
      withDeadline(Date.now() + 60_000, service.signal, () => Promise.reject(new Error('failed'))),
    ).rejects.toThrow('failed');
    expect(getEventListeners(service.signal, 'abort')).toHaveLength(0);
  });
});
