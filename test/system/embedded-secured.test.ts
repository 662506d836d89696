import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createCertificateAuthority } from '@hopline/cli';
import { startEmbedded } from '@hopline/embedded';
import { embeddedTestConfig } from './support/embedded-config.js';
import { startNatsServer } from '@hopline/test-support';

const dir = mkdtempSync(join(tmpdir(), 'hopline-embedded-secured-'));
const file = (name: string) => join(dir, name);
const ca = await createCertificateAuthority({ cert: file('ca.crt'), key: file('ca.key') });
await ca.issue('nats', ['localhost', '127.0.0.1'], { cert: file('nats.crt'), key: file('nats.key') });
const password = randomBytes(12).toString('hex');

// A server that takes TLS clients with this user's password only.
const nats = await startNatsServer({
  config: [
    `tls { cert_file: "${file('nats.crt')}", key_file: "${file('nats.key')}", ca_file: "${file('ca.crt')}" }`,
    `authorization { user: "hopline", password: "${password}" }`,
  ].join('\n'),
});

afterAll(async () => {
  await nats?.[Symbol.asyncDispose]();
  rmSync(dir, { recursive: true, force: true });
});

const configWith = (security: Record<string, string>, dataDir: string) =>
  embeddedTestConfig(dataDir, { LOG_LEVEL: 'error', NATS_URL: nats?.url, ...security });

describe.skipIf(!nats)('system - embedded mode on a secured NATS server', () => {
  it('embedded - connects with the configured NATS credentials and CA, answers from the demo corpus, and is refused without them', async () => {
    const credentials = { NATS_CA: file('ca.crt'), NATS_USER: 'hopline', NATS_PASSWORD: password };
    await expect(startEmbedded(configWith({ NATS_CA: file('ca.crt') }, file('refused')), {})).rejects.toThrow(
      /Authorization/i,
    );
    await expect(
      startEmbedded(configWith({ ...credentials, NATS_PASSWORD: 'wrong' }, file('refused')), {}),
    ).rejects.toThrow(/Authorization/i);

    const embedded = await startEmbedded(configWith(credentials, file('data')), {});
    try {
      expect(embedded.busKind).toBe('nats');
      expect(embedded.demoCorpus).toEqual({ loaded: true, documents: 14 });
      const response = await fetch(`${embedded.httpUrl}/v1/ask`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${embedded.devKey?.key ?? ''}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({
          question: 'Which department does the owner of Project Atlas belong to?',
          kbIds: ['demo'],
        }),
      });
      expect(response.status).toBe(200);
      const body = (await response.json()) as { answer: string; citations: unknown[] };
      expect(body.answer).toMatch(/Platform Engineering/);
      expect(body.citations.length).toBeGreaterThan(0);
    } finally {
      await embedded.stop();
    }
  }, 90_000);
});
