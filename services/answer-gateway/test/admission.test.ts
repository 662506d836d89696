import { waitFor } from '@hopline/test-support';
import { describe, expect, it } from 'vitest';
import { Admission, KeyRateLimiter } from '../src/admission.js';
import { AnswerCache } from '../src/cache/answer-cache.js';
import { MemoryCacheStore } from '../src/cache/memory-store.js';
import { twoHopScript } from './support/fake-reasoner.js';
import { askJson, askSse, bearer, metricValue, startTestGateway, testKeys } from './support/harness.js';
import { findRedis } from './support/redis.js';

const redis = await findRedis();

describe('answer-gateway admission control', () => {
  it('beyond the in-flight bound answers 429 with Retry-After at once, and the running questions finish complete', async () => {
    await using t = await startTestGateway({
      config: { MAX_IN_FLIGHT: 2, RATE_BURST_PER_KEY: 1_000 },
      script: twoHopScript({ gated: true }),
    });
    const running = [
      await askSse(t.baseUrl, t.keys.alice, { question: 'Who owns Atlas?' }),
      await askSse(t.baseUrl, t.keys.carol, { question: 'Who owns Atlas?' }),
    ];
    await waitFor(() => running.every((stream) => stream.events.length >= 1), {
      description: 'both questions running',
    });

    // Both running questions are held at a gate: a refusal that waited for a slot could not arrive.
    const refused = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        askJson(t.baseUrl, i % 2 ? t.keys.alice : t.keys.bob, { question: `question ${i}` }),
      ),
    );
    for (const response of refused) {
      expect(response.status).toBe(429);
      expect(response.headers.get('retry-after')).toBe('1');
      expect(response.headers.get('content-type')).toBe('application/problem+json');
    }
    expect(await refused[0]?.json()).toMatchObject({ type: 'urn:hopline:problem:too-many-requests' });
    expect(t.reasoner.asks).toHaveLength(2);
    expect(await metricValue(t.metrics, 'hopline_gateway_admission_rejections_total', { reason: 'in_flight' })).toBe(
      40,
    );
    expect(await metricValue(t.metrics, 'hopline_gateway_questions_in_flight')).toBe(2);

    await waitFor(() => {
      t.reasoner.releaseAll();
      return running.every((stream) => stream.events.at(-1)?.name === 'done');
    });
    for (const stream of running) {
      await stream.ended;
      expect(stream.events.map((event) => event.id)).toEqual(stream.events.map((_, index) => index + 1));
      expect(stream.events.filter((event) => event.name === 'done')).toHaveLength(1);
    }
    // Their slots are free again.
    t.reasoner.script = twoHopScript();
    await waitFor(async () => (await askJson(t.baseUrl, t.keys.bob, { question: 'And now?' })).status === 200);
  });

  it('a tenant that filled every slot gets none of those its questions free while another tenant waits for one', async () => {
    await using t = await startTestGateway({
      config: { MAX_IN_FLIGHT: 4, RATE_BURST_PER_KEY: 1_000 },
      script: twoHopScript({ gated: true }),
    });
    const { alice, carol } = t.keys;
    // Alone, alice's tenant may take every slot, beyond its share of 2.
    const alices = await Promise.all(
      Array.from({ length: 4 }, (_, i) => askSse(t.baseUrl, alice, { question: `Alice's question ${i}?` })),
    );
    await waitFor(() => alices.every((stream) => stream.events.length >= 1), { description: 'alice holds every slot' });
    const full = await askJson(t.baseUrl, carol, { question: 'Who owns Atlas?' });
    expect(full.status).toBe(429);

    const [first] = t.reasoner.asks;
    await waitFor(
      () => {
        t.reasoner.release(first!.ctx!.questionId);
        return alices.some((stream) => stream.events.at(-1)?.name === 'done');
      },
      { description: 'one of alice’s questions to end' },
    );
    const overShare = await askJson(t.baseUrl, alice, { question: 'Another of Alice’s?' });
    expect(overShare.status).toBe(429);
    expect(overShare.headers.get('retry-after')).toBe('1');
    expect(await overShare.json()).toMatchObject({
      detail: expect.stringContaining("this tenant's questions") as unknown,
    });
    const carols = await askSse(t.baseUrl, carol, { question: 'Who owns Atlas?' });
    await waitFor(() => carols.events.length >= 1, { description: 'carol’s question to start in the freed slot' });
    expect(await metricValue(t.metrics, 'hopline_gateway_admission_rejections_total', { reason: 'tenant_share' })).toBe(
      1,
    );
    await waitFor(() => {
      t.reasoner.releaseAll();
      return [...alices, carols].every((stream) => stream.events.at(-1)?.name === 'done');
    });
  });

  it('the tenant share: counted against the tenant’s own questions, binding only while another tenant runs or waited', () => {
    let clock = 0;
    const running = new Map<string, number>();
    const admission = new Admission({
      ratePerSecond: 1,
      burst: 1,
      maxInFlight: 4,
      maxInFlightPerTenant: 2,
      inFlight: () => [...running.values()].reduce((sum, n) => sum + n, 0),
      inFlightOf: (tenantId) => running.get(tenantId) ?? 0,
      now: () => clock,
    });
    running.set('a', 3);
    expect(() => admission.checkCapacity('a')).not.toThrow();
    running.set('b', 1);
    expect(() => admission.checkCapacity('b')).toThrow(/answering 4 questions/);
    running.set('b', 0);
    running.set('a', 2);
    expect(() => admission.checkCapacity('a')).toThrow(/share/);
    // b was refused a slot a moment ago: it counts as waiting for two seconds.
    running.delete('b');
    clock = 1_999;
    expect(() => admission.checkCapacity('a')).toThrow(/share/);
    expect(() => admission.checkCapacity('c')).not.toThrow();
    clock = 2_001;
    expect(() => admission.checkCapacity('a')).not.toThrow();
    // Another tenant running binds the share without any refusal.
    running.set('c', 1);
    expect(() => admission.checkCapacity('a')).toThrow(/share/);
    expect(() => admission.checkCapacity('c')).not.toThrow();
  });

  it('a key over its rate gets 429 with Retry-After while other keys are served, and is served again once tokens come back', async () => {
    await using t = await startTestGateway({ config: { RATE_BURST_PER_KEY: 3, RATE_PER_KEY_PER_SECOND: 1 } });
    for (let i = 0; i < 3; i++)
      expect((await askJson(t.baseUrl, t.keys.alice, { question: `Who owns Atlas ${i}?` })).status).toBe(200);
    const limited = await askJson(t.baseUrl, t.keys.alice, { question: 'One more?' });
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('1');
    expect(await limited.json()).toMatchObject({
      type: 'urn:hopline:problem:too-many-requests',
      detail: expect.stringContaining('1 questions per second') as unknown,
    });
    expect((await askJson(t.baseUrl, t.keys.carol, { question: 'Who owns Atlas?' })).status).toBe(200);
    expect(await metricValue(t.metrics, 'hopline_gateway_admission_rejections_total', { reason: 'rate' })).toBe(1);
    await waitFor(async () => (await askJson(t.baseUrl, t.keys.alice, { question: 'One more?' })).status === 200, {
      description: 'a token to come back',
    });
  });

  it('ingestion requests draw on a bucket of the key’s own at the same rate: beyond it 429 with Retry-After, and the key’s questions go on', async () => {
    await using t = await startTestGateway({ config: { RATE_BURST_PER_KEY: 2, RATE_PER_KEY_PER_SECOND: 0.01 } });
    const ingest = (docId: string) =>
      fetch(`${t.baseUrl}/v1/kbs/projects/documents`, {
        method: 'POST',
        headers: { ...bearer(t.keys.alice), 'Content-Type': 'application/json' },
        body: JSON.stringify({ docId, text: 'Atlas is owned by Dana.' }),
      });
    expect((await ingest('d1')).status).toBe(202);
    expect((await ingest('d2')).status).toBe(202);
    const limited = await ingest('d3');
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await limited.json()).toMatchObject({ detail: expect.stringContaining('ingestion requests') as unknown });
    const deleting = await fetch(`${t.baseUrl}/v1/kbs/projects/documents/d1`, {
      method: 'DELETE',
      headers: bearer(t.keys.alice),
    });
    expect(deleting.status).toBe(429);
    expect((await askJson(t.baseUrl, t.keys.alice, { question: 'Who owns Atlas?' })).status).toBe(200);
  });

  it('cached answers count against the rate too', async () => {
    await using t = await startTestGateway({ config: { RATE_BURST_PER_KEY: 2, RATE_PER_KEY_PER_SECOND: 0.001 } });
    expect((await askJson(t.baseUrl, t.keys.alice, { question: 'Who owns Atlas?' })).status).toBe(200);
    expect((await askJson(t.baseUrl, t.keys.alice, { question: 'Who owns Atlas?' })).status).toBe(200);
    const third = await askJson(t.baseUrl, t.keys.alice, { question: 'Who owns Atlas?' });
    expect(third.status).toBe(429);
    // One token per 1000 s: the client is told to come back in 1000 s, not 1.
    expect(third.headers.get('retry-after')).toBe('1000');
  });
});

describe('KeyRateLimiter', () => {
  it('allows a burst, then refills at the rate, never above the burst', () => {
    let now = 0;
    const limiter = new KeyRateLimiter({ ratePerSecond: 2, burst: 3, now: () => now });
    expect([1, 2, 3].map(() => limiter.take('k').allowed)).toEqual([true, true, true]);
    expect(limiter.take('k')).toEqual({ allowed: false, retryAfterMs: 500 });
    now = 250;
    expect(limiter.take('k')).toEqual({ allowed: false, retryAfterMs: 250 });
    now = 500;
    expect(limiter.take('k').allowed).toBe(true);
    now = 100_000;
    expect([1, 2, 3, 4].map(() => limiter.take('k').allowed)).toEqual([true, true, true, false]);
    expect(limiter.take('other').allowed).toBe(true);
  });

  it('forgets buckets that have refilled, so that many keys do not grow memory without bound', () => {
    let now = 0;
    const limiter = new KeyRateLimiter({ ratePerSecond: 1, burst: 1, now: () => now });
    for (let i = 0; i < 10_000; i++) limiter.take(`key-${i}`);
    expect(limiter.trackedKeys).toBe(10_000);
    now = 500;
    limiter.take('early');
    // Half a token back is not a full bucket: every empty one is still remembered.
    expect(limiter.trackedKeys).toBe(10_001);
    now = 2_000;
    limiter.take('late');
    // Everything but the newcomer had refilled by then, "early" included.
    expect(limiter.trackedKeys).toBe(1);
  });
});

describe.skipIf(redis.url === undefined)('answer-gateway admission shared through Redis', () => {
  it("with REDIS_URL two gateway instances share each key's rate: the burst is admitted once between them, with Retry-After", async () => {
    const keys = testKeys();
    const config = { REDIS_URL: redis.url, RATE_BURST_PER_KEY: 4, RATE_PER_KEY_PER_SECOND: 0.01 };
    await using first = await startTestGateway({ config, keys });
    await using second = await startTestGateway({ config, keys });
    const statuses: number[] = [];
    for (let i = 0; i < 8; i += 1) {
      const gateway = i % 2 === 0 ? first : second;
      statuses.push((await askJson(gateway.baseUrl, keys.alice, { question: `Who owns Atlas ${i}?` })).status);
    }
    expect(statuses).toEqual([200, 200, 200, 200, 429, 429, 429, 429]);
    const limited = await askJson(second.baseUrl, keys.alice, { question: 'Once more?' });
    expect(limited.status).toBe(429);
    // One token per 100 s, and a fraction of one already back: about 100 s to wait.
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(90);
    // Another key has its own bucket.
    expect((await askJson(first.baseUrl, keys.carol, { question: 'Who owns Atlas?' })).status).toBe(200);
  });

  it('while Redis cannot be reached each instance limits rates alone, rather than refusing or admitting everything', async () => {
    await using t = await startTestGateway({
      config: { REDIS_URL: 'redis://127.0.0.1:1', RATE_BURST_PER_KEY: 2, RATE_PER_KEY_PER_SECOND: 0.01 },
      // Only the rates go to the Redis that is not there.
      cache: new AnswerCache(new MemoryCacheStore(10), { ttlMs: 60_000 }),
    });
    const statuses = [];
    for (let i = 0; i < 3; i += 1)
      statuses.push((await askJson(t.baseUrl, t.keys.alice, { question: `Who owns Atlas ${i}?` })).status);
    expect(statuses).toEqual([200, 200, 429]);
  });
});
