import { createMemoryBroker, type BusConnection } from '@hopline/bus';
import { BusUnavailableError, codecs, subjects } from '@hopline/contracts';
import { createGuard } from '@hopline/resilience';
import { waitFor } from '@hopline/test-support';
import { describe, expect, it } from 'vitest';
import { closeRetrievalBreakerAfterBusOutage } from '../src/clients/bus-outage-breaker.js';
import { WorkerDirectory } from '../src/clients/worker-directory.js';

const breaker = {
  errorThresholdPercentage: 50,
  volumeThreshold: 2,
  resetTimeoutMs: 60_000,
  rollingCountTimeoutMs: 10_000,
  consecutiveFailures: 2,
};
const SETTLE_MS = 2_500;

/** A retrieval guard whose breaker two failures open, with the bus state the test sets and a worker that can announce itself. */
async function fixture(connection: BusConnection) {
  const bus = createMemoryBroker().connect();
  const guard = createGuard({ downstream: 'retrieval-worker', breaker });
  const workers = await WorkerDirectory.start(bus);
  const state = { connection };
  const stop = closeRetrievalBreakerAfterBusOutage({
    bus: { connection: () => state.connection },
    guard,
    workers,
    settleMs: SETTLE_MS,
  });
  const fail = () =>
    guard
      .call(async () => Promise.reject(new BusUnavailableError('message bus unavailable')), {
        deadlineUnixMs: Date.now() + 5_000,
      })
      .catch(() => undefined);
  const announce = async () => {
    bus.publish(subjects.retrievalPresence, codecs.workerPresence.encode({ workerId: 'worker-1', ingestLag: 0 }));
    await bus.flush();
  };
  return {
    state,
    guard,
    fail,
    announce,
    [Symbol.dispose]: () => {
      stop();
      workers.stop();
      guard.shutdown();
    },
  };
}

describe('retrieval breaker after a bus outage', () => {
  it('retrieval breaker - opened while the bus was down, it closes once a worker is heard over the restored bus, not before', async () => {
    using t = await fixture({ connected: true, sinceUnixMs: Date.now() - 60_000 });
    t.state.connection = { connected: false, sinceUnixMs: Date.now(), reason: 'lost the connection to NATS' };
    await t.fail();
    await t.fail();
    expect(t.guard.state).toBe('open');
    // Still down: a worker heard (over another route) proves nothing about this bus.
    await t.announce();
    expect(t.guard.state).toBe('open');
    t.state.connection = { connected: true, sinceUnixMs: Date.now() };
    await t.announce();
    await waitFor(() => t.guard.state === 'closed');
  });

  it('retrieval breaker - opened while the bus was up (and had been for longer than the settle time), it waits out its reset however often workers announce', async () => {
    using t = await fixture({ connected: true, sinceUnixMs: Date.now() - 60_000 });
    await t.fail();
    await t.fail();
    expect(t.guard.state).toBe('open');
    await t.announce();
    await t.announce();
    expect(t.guard.state).toBe('open');
  });
});
