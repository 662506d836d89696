import { afterEach, describe, expect, it } from 'vitest';
import { createMetrics, startOpsServer, type HealthReport, type OpsServer } from '../src/index.js';

const servers: OpsServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

async function start(health: () => Promise<HealthReport>) {
  const metrics = createMetrics('hop-reasoner', { defaultMetrics: false });
  const server = await startOpsServer({ port: 0, host: '127.0.0.1', registry: metrics.registry, health });
  servers.push(server);
  return { metrics, url: `http://127.0.0.1:${server.port}` };
}

describe('ops server', () => {
  it('ops server - GET /metrics serves the registry in Prometheus text, labelled by service', async () => {
    const { metrics, url } = await start(async () => ({ ok: true, details: {} }));
    metrics.stopReasons.inc({ reason: 'sufficient' });
    metrics.breakerState.set({ downstream: 'reranker' }, 2);
    metrics.grpcRequests.inc({ method: 'hopline.v1.Reranker/Rerank', role: 'client', code: 'OK' });
    const response = await fetch(`${url}/metrics`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/plain');
    const body = await response.text();
    expect(body).toContain('hopline_stop_reasons_total{reason="sufficient",service="hop-reasoner"} 1');
    expect(body).toContain('hopline_breaker_state{downstream="reranker",service="hop-reasoner"} 2');
    expect(body).toContain(
      'hopline_grpc_requests_total{method="hopline.v1.Reranker/Rerank",role="client",code="OK",service="hop-reasoner"} 1',
    );
  });

  it('ops server - GET /healthz answers 200 when healthy and 503 with details when not', async () => {
    let report: HealthReport = { ok: true, details: { nats: 'connected' } };
    const { url } = await start(async () => report);
    const healthy = await fetch(`${url}/healthz`);
    expect(healthy.status).toBe(200);
    expect(await healthy.json()).toEqual({ ok: true, details: { nats: 'connected' } });

    report = { ok: false, details: { nats: 'disconnected' } };
    const unhealthy = await fetch(`${url}/healthz`);
    expect(unhealthy.status).toBe(503);
    expect(await unhealthy.json()).toEqual({ ok: false, details: { nats: 'disconnected' } });
  });

  it('ops server - /livez answers 200 while /readyz (and /healthz) answer 503 for a service that is not ready', async () => {
    const { url } = await start(async () => ({ ok: false, details: { bus: { connected: false } } }));
    const live = await fetch(`${url}/livez`);
    expect(live.status).toBe(200);
    expect(await live.json()).toEqual({ ok: true });
    for (const path of ['/readyz', '/healthz']) {
      const ready = await fetch(`${url}${path}`);
      expect(ready.status, path).toBe(503);
      expect(await ready.json(), path).toEqual({ ok: false, details: { bus: { connected: false } } });
    }
  });

  it('ops server - a health check that throws answers 503 with its message', async () => {
    const { url } = await start(async () => {
      throw new Error('index not loaded');
    });
    const response = await fetch(`${url}/healthz`);
    expect(response.status).toBe(503);
    expect(await response.json()).toEqual({ ok: false, details: { error: 'index not loaded' } });
  });

  it('ops server - unknown paths are 404 and other methods 405', async () => {
    const { url } = await start(async () => ({ ok: true, details: {} }));
    expect((await fetch(`${url}/nope`)).status).toBe(404);
    const post = await fetch(`${url}/metrics`, { method: 'POST' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
  });

  it('ops server - close stops it answering, even with a kept-alive connection', async () => {
    const server = await startOpsServer({
      port: 0,
      host: '127.0.0.1',
      registry: createMetrics('x', { defaultMetrics: false }).registry,
      health: async () => ({ ok: true, details: {} }),
    });
    const url = `http://127.0.0.1:${server.port}/healthz`;
    expect((await fetch(url, { headers: { connection: 'keep-alive' } })).status).toBe(200);
    await server.close();
    await expect(fetch(url)).rejects.toThrow();
  });

  it('ops server - a port already in use rejects the start', async () => {
    const { url } = await start(async () => ({ ok: true, details: {} }));
    const port = Number(new URL(url).port);
    await expect(
      startOpsServer({
        port,
        host: '127.0.0.1',
        registry: createMetrics('y', { defaultMetrics: false }).registry,
        health: async () => ({ ok: true, details: {} }),
      }),
    ).rejects.toThrow(/EADDRINUSE/);
  });
});

describe('metrics', () => {
  it('metrics - every architecture instrument is registered, with process metrics by default', async () => {
    const metrics = createMetrics('answer-gateway');
    const names = (await metrics.registry.getMetricsAsJSON()).map((metric) => metric.name);
    expect(names).toEqual(
      expect.arrayContaining([
        'hopline_hop_duration_seconds',
        'hopline_hops_per_question',
        'hopline_stop_reasons_total',
        'hopline_breaker_state',
        'hopline_breaker_transitions_total',
        'hopline_breaker_failures_total',
        'hopline_degraded_retrievals_total',
        'hopline_cache_lookups_total',
        'hopline_llm_calls_total',
        'hopline_llm_tokens_total',
        'hopline_nats_requests_total',
        'hopline_nats_request_duration_seconds',
        'hopline_grpc_requests_total',
        'hopline_grpc_request_duration_seconds',
        'process_cpu_user_seconds_total',
      ]),
    );
  });

  it('metrics - two services in one process keep separate registries', async () => {
    const a = createMetrics('a', { defaultMetrics: false });
    const b = createMetrics('b', { defaultMetrics: false });
    a.cacheLookups.inc({ cache: 'answer', result: 'hit' });
    expect(await a.registry.metrics()).toContain(
      'hopline_cache_lookups_total{cache="answer",result="hit",service="a"} 1',
    );
    expect(await b.registry.metrics()).not.toContain('result="hit"');
  });
});
