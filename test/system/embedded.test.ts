import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { embeddedConfigSchema, startEmbedded } from '@hopline/embedded';

const dataDir = mkdtempSync(join(tmpdir(), 'hopline-embedded-'));
const config = embeddedConfigSchema.parse({ DATA_DIR: dataDir, HTTP_PORT: '0', GRPC_PORT: '0', LOG_LEVEL: 'warn' });
const question = { question: 'Which department does the owner of Project Atlas belong to?', kbIds: ['demo'] };

async function ask(httpUrl: string, apiKey: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${httpUrl}/v1/ask`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json' },
    body: JSON.stringify(question),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

describe('system - embedded mode', () => {
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('embedded - one process answers from the demo corpus, and a restart keeps the knowledge base and the key', async () => {
    const first = await startEmbedded(config, {});
    try {
      expect(first.busKind).toBe('memory');
      expect(first.demoCorpus).toEqual({ loaded: true, documents: 14 });
      // The dev key is readable by its owner only.
      expect(statSync(first.apiKeyFile).mode & 0o077).toBe(0);
      const answer = await ask(first.httpUrl, first.apiKey);
      expect(answer.status).toBe(200);
      expect(answer.body.answer).toMatch(/\[\d+\]/);
      expect((answer.body.citations as unknown[]).length).toBeGreaterThan(0);
    } finally {
      await first.stop();
    }

    const second = await startEmbedded(config, {});
    try {
      expect(second.apiKey).toBe(first.apiKey);
      expect(second.demoCorpus.loaded).toBe(false);
      const answer = await ask(second.httpUrl, second.apiKey);
      expect(answer.status).toBe(200);
      expect((answer.body.citations as Array<{ docId: string }>).length).toBeGreaterThan(0);
    } finally {
      await second.stop();
    }
  }, 60_000);
});
