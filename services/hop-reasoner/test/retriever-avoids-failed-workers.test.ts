import { createMemoryBroker } from '@hopline/bus';
import { codecs, subjects } from '@hopline/contracts';
import type { CallContext } from '@hopline/reasoning';
import { createGuard, DEFAULT_BREAKER } from '@hopline/resilience';
import { waitFor } from '@hopline/test-support';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createRetrieverClient } from '../src/clients/retriever-client.js';
import { WorkerDirectory } from '../src/clients/worker-directory.js';

const callContext = (): CallContext => ({
  request: {
    questionId: 'q1',
    scope: { tenantId: 'acme', userId: 'u', kbIds: ['docs'], docIds: [] },
    deadlineUnixMs: Date.now() + 5_000,
  },
  deadlineUnixMs: Date.now() + 5_000,
  signal: new AbortController().signal,
});

afterEach(() => vi.restoreAllMocks());

describe('retriever client: workers that fail are passed over', () => {
  it('retrieval - two crashed workers still listed do not cut the hop-reasoner off from the one that answers, nor open the breaker in front of all', async () => {
    const broker = createMemoryBroker();
    const bus = broker.connect();
    const workersBus = broker.connect();
    await workersBus.serve({
      name: 'retrieval-worker',
      version: '0.1.0',
      endpoints: [
        {
          name: 'alive',
          subject: subjects.retrieveAt('alive'),
          handle: async () => ({
            data: codecs.retrieveResponse.encode({
              chunks: [],
              degraded: false,
              degradedReasons: [],
              workerId: 'alive',
            }),
          }),
        },
      ],
    });
    const workers = await WorkerDirectory.start(bus);
    // "dead-1" and "dead-2" announced themselves a moment ago and have since crashed: their own
    // subjects have no responders.
    for (const workerId of ['dead-1', 'dead-2', 'alive'])
      workersBus.publish(subjects.retrievalPresence, codecs.workerPresence.encode({ workerId, ingestLag: 0 }));
    await waitFor(() => workers.live.length === 3);
    const guard = createGuard({
      downstream: 'retrieval-worker',
      breaker: { ...DEFAULT_BREAKER, resetTimeoutMs: 60_000, consecutiveFailures: 2 },
    });
    const retriever = createRetrieverClient({ bus, guard, workers, budgetMs: 2_000, minHedgeDelayMs: 20 });
    // Ties between idle workers are broken at random: take the first each time, for a repeatable run.
    vi.spyOn(Math, 'random').mockReturnValue(0);
    const input = { query: 'q', hydeText: '', topK: 5, hop: 1, seeds: [] };
    const outcomes: string[] = [];
    for (let i = 0; i < 4; i += 1) {
      outcomes.push(
        await retriever.retrieve(input, callContext()).then(
          () => 'ok',
          (error: { code?: string }) => error.code ?? 'error',
        ),
      );
    }
    guard.shutdown();
    workers.stop();
    // The first call may lose both attempts to the crashed workers; the ones after must reach "alive".
    expect(outcomes.slice(1)).toEqual(['ok', 'ok', 'ok']);
    expect(guard.state).toBe('closed');
  });
});
