import { existsSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { createMetrics } from '../src/index.js';

/** How often this process's main thread has gone to sleep and been woken (Linux). */
function wakeups(): number {
  return Number(/voluntary_ctxt_switches:\s+(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1]);
}

describe('metrics', () => {
  it.runIf(existsSync('/proc/self/status'))(
    'metrics - the process metrics do not wake an idle process a hundred times a second',
    async () => {
      createMetrics('hop-reasoner');
      // The event-loop lag monitor starts sampling at once; measure a whole second of idling.
      const before = wakeups();
      await sleep(1_000);
      expect(wakeups() - before).toBeLessThan(50);
    },
  );
});
