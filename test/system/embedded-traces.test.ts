import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbedded } from '@hopline/embedded';
import { embeddedTestConfig } from './support/embedded-config.js';
import { startTestTelemetry, type TestTelemetry } from '@hopline/telemetry/testing';

const SERVICES = ['answer-gateway', 'hop-reasoner', 'query-understanding', 'reranker', 'retrieval-worker'];
const dataDir = mkdtempSync(join(tmpdir(), 'hopline-embedded-traces-'));
let telemetry: TestTelemetry;

beforeAll(() => {
  telemetry = startTestTelemetry('hopline-embedded', { services: SERVICES });
});
afterAll(async () => {
  await telemetry.shutdown();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('system - embedded mode traces', () => {
  it('embedded - one question is one trace whose spans carry the five services’ own service.name', async () => {
    const config = embeddedTestConfig(dataDir);
    const embedded = await startEmbedded(config, {});
    try {
      telemetry.exporter.reset();
      const response = await fetch(`${embedded.httpUrl}/v1/ask`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${embedded.devKey?.key ?? ''}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({
          question: 'Which department does the owner of Project Atlas belong to?',
          kbIds: ['demo'],
        }),
      });
      expect(response.status).toBe(200);
      const { questionId } = (await response.json()) as { questionId: string };
      const spans = telemetry.spans().filter((span) => span.attributes['hopline.question_id'] === questionId);
      expect(new Set(spans.map((span) => span.spanContext().traceId)).size).toBe(1);
      expect(new Set(spans.map((span) => span.resource.attributes['service.name']))).toEqual(new Set(SERVICES));
    } finally {
      await embedded.stop();
    }
  }, 60_000);
});
