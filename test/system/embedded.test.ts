import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { generateApiKey, hashApiKey } from '@hopline/answer-gateway';
import { startEmbedded } from '@hopline/embedded';
import { embeddedTestConfig } from './support/embedded-config.js';

const dataDir = mkdtempSync(join(tmpdir(), 'hopline-embedded-'));
const config = embeddedTestConfig(dataDir);
const question = { question: 'Which department does the owner of Project Atlas belong to?', kbIds: ['demo'] };

async function ask(
  httpUrl: string,
  apiKey: string,
): Promise<{ status: number; body: Record<string, unknown>; questionId: string }> {
  const response = await fetch(`${httpUrl}/v1/ask`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json' },
    body: JSON.stringify(question),
  });
  return {
    status: response.status,
    body: (await response.json()) as Record<string, unknown>,
    questionId: response.headers.get('Hopline-Question-Id') ?? '',
  };
}

async function storedTrace(httpUrl: string, apiKey: string, questionId: string): Promise<Record<string, unknown>> {
  const response = await fetch(`${httpUrl}/v1/questions/${questionId}/trace`, {
    headers: { Authorization: `Bearer ${apiKey}` },
  });
  expect(response.status).toBe(200);
  return (await response.json()) as Record<string, unknown>;
}

describe('system - embedded mode', () => {
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('embedded - one process answers from the demo corpus, and a restart keeps the knowledge base, the key and the traces', async () => {
    const first = await startEmbedded(config, {});
    let firstQuestion = '';
    try {
      expect(first.busKind).toBe('memory');
      expect(first.demoCorpus).toEqual({ loaded: true, documents: 14 });
      // The dev key is readable by its owner only.
      expect(first.keys).toEqual({ source: 'dev key', count: 1 });
      const devKey = first.devKey?.key ?? '';
      expect(statSync(first.devKey?.file ?? '').mode & 0o077).toBe(0);
      const answer = await ask(first.httpUrl, devKey);
      expect(answer.status).toBe(200);
      expect(answer.body.answer).toMatch(/\[\d+\]/);
      expect((answer.body.citations as unknown[]).length).toBeGreaterThan(0);
      firstQuestion = answer.questionId;
      expect((await storedTrace(first.httpUrl, devKey, firstQuestion)).stopReason).toBeDefined();
    } finally {
      await first.stop();
    }

    const second = await startEmbedded(config, {});
    try {
      expect(second.devKey?.key).toBe(first.devKey?.key);
      expect(second.demoCorpus.loaded).toBe(false);
      const answer = await ask(second.httpUrl, second.devKey?.key ?? '');
      expect(answer.status).toBe(200);
      expect((answer.body.citations as Array<{ docId: string }>).length).toBeGreaterThan(0);
      const kept = await storedTrace(second.httpUrl, second.devKey?.key ?? '', firstQuestion);
      expect(kept.questionId).toBe(firstQuestion);
      expect(kept.answer).toBeDefined();
    } finally {
      await second.stop();
    }
  }, 60_000);

  it('embedded - API_KEYS_FILE gives the embedded gateway several tenants, and no dev key is made', async () => {
    const keysDir = mkdtempSync(join(tmpdir(), 'hopline-embedded-keys-'));
    const [acme, globex] = [generateApiKey(), generateApiKey()];
    const keysFile = join(keysDir, 'api-keys.json');
    writeFileSync(
      keysFile,
      JSON.stringify({
        keys: [
          { keyHash: hashApiKey(acme), tenantId: 'acme', userId: 'ana', kbIds: ['handbook'], canIngest: true },
          { keyHash: hashApiKey(globex), tenantId: 'globex', userId: 'gus', kbIds: ['wiki'], canIngest: true },
        ],
      }),
    );
    const embedded = await startEmbedded(
      { ...config, DATA_DIR: join(keysDir, 'data'), LOAD_DEMO_CORPUS: false },
      {
        API_KEYS_FILE: keysFile,
      },
    );
    try {
      expect(embedded.keys).toEqual({ source: 'API_KEYS_FILE', count: 2 });
      expect(embedded.devKey).toBeUndefined();
      expect(existsSync(join(keysDir, 'data', 'dev-api-key'))).toBe(false);
      const ingest = (key: string, kbId: string) =>
        fetch(`${embedded.httpUrl}/v1/kbs/${kbId}/documents`, {
          method: 'POST',
          headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
          body: JSON.stringify({ docId: 'readme', title: 'Readme', text: 'Read me first.' }),
        });
      expect((await ingest(acme, 'handbook')).status).toBe(202);
      expect((await ingest(globex, 'wiki')).status).toBe(202);
      expect((await ingest(globex, 'handbook')).status).toBe(403);
      expect((await ingest(generateApiKey(), 'handbook')).status).toBe(401);
    } finally {
      await embedded.stop();
      rmSync(keysDir, { recursive: true, force: true });
    }
  }, 60_000);
});
