import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbedded, type Embedded } from '@hopline/embedded';
import { embeddedTestConfig } from './support/embedded-config.js';
import { waitFor } from '@hopline/test-support';

const dataDir = mkdtempSync(join(tmpdir(), 'hopline-ingestion-'));
const config = embeddedTestConfig(dataDir, { LOAD_DEMO_CORPUS: 'false' });

describe('system - ingestion through the gateway', () => {
  let hopline: Embedded;
  const documents = (path = '') => `${hopline.httpUrl}/v1/kbs/demo/documents${path}`;
  const headers = () => ({ Authorization: `Bearer ${hopline.devKey?.key ?? ''}`, 'Content-Type': 'application/json' });
  const ingest = (body: unknown) =>
    fetch(documents(), { method: 'POST', headers: headers(), body: JSON.stringify(body) });
  const remove = (docId: string) => fetch(documents(`/${docId}`), { method: 'DELETE', headers: headers() });

  beforeAll(async () => {
    hopline = await startEmbedded(config, {});
  });
  afterAll(async () => {
    await hopline?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('ingestion - a version ahead of the clock is refused, so no client can pin a document against later ingests and deletes', async () => {
    const refused = await ingest({ docId: 'pinned', text: 'Pinned forever?', version: Date.now() + 86_400_000 });
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { detail: string }).detail).toMatch(/ahead of the clock/);
    expect((await ingest({ docId: 'pinned', text: 'Not pinned.', version: 7 })).status).toBe(202);
    expect((await remove('pinned')).status).toBe(202);
    expect((await ingest({ docId: 'pinned', text: 'Back again.' })).status).toBe(202);
    expect((await remove('pinned')).status).toBe(202);
  });

  it('ingestion - deleting an unknown document says so, and a document accepted a moment ago is found', async () => {
    const unknown = await remove('never-ingested');
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as { detail: string }).detail).toBe('no document "never-ingested" in kb "demo"');

    expect((await ingest({ docId: 'fresh', title: 'Fresh', text: 'Accepted a moment ago.' })).status).toBe(202);
    const deleted = await remove('fresh');
    expect(deleted.status).toBe(202);
    expect(await deleted.json()).toMatchObject({ docId: 'fresh', deleted: true });
    expect((await remove('fresh')).status).toBe(404);
  });

  it('ingestion - a document named "x:delete" and the delete of "x" are both applied', async () => {
    expect((await ingest({ docId: 'x', text: 'The document x.' })).status).toBe(202);
    expect((await ingest({ docId: 'x:delete', text: 'A document whose name ends in :delete.' })).status).toBe(202);
    expect((await remove('x')).status).toBe(202);
    expect((await remove('x')).status).toBe(404);
    expect((await remove('x:delete')).status).toBe(202);
  });

  it('ingestion - a 10 MB document goes in whole: a fact on its last page is found and cited with that page', async () => {
    const filler = 'The archive keeps ledgers of grain, wool and salt from every market town in the valley. ';
    const ledgers = filler.repeat(Math.ceil(10_000_000 / filler.length));
    const text = `${ledgers}\n\nThe keeper of the Vellmore archive is Odalys Fenwright.`;
    expect(Buffer.byteLength(text)).toBeGreaterThan(10_000_000);
    const sections = [
      { start: 0, fragment: 'page=1' },
      { start: ledgers.length + 2, fragment: 'page=2' },
    ];
    const document = {
      docId: 'vellmore-ledgers',
      title: 'Vellmore ledgers',
      text,
      sourceUri: 'vellmore.pdf',
      sections,
    };
    expect((await ingest(document)).status).toBe(202);
    // 202 is accepted, not yet searchable: ten megabytes take a while to index on a loaded machine.
    await waitFor(
      async () => {
        const kb = await fetch(`${hopline.httpUrl}/v1/kbs/demo`, { headers: headers() });
        return ((await kb.json()) as { chunks: number }).chunks > 1_000;
      },
      { timeoutMs: 90_000, intervalMs: 200, description: 'the 10 MB document indexed' },
    );

    const response = await fetch(`${hopline.httpUrl}/v1/ask`, {
      method: 'POST',
      headers: headers(),
      body: JSON.stringify({ question: 'Who is the keeper of the Vellmore archive?', kbIds: ['demo'], maxHops: 1 }),
    });
    expect(response.status).toBe(200);
    const done = (await response.json()) as { answer: string; citations: Array<{ docId: string; sourceUri?: string }> };
    expect(done.answer).toContain('Odalys Fenwright');
    expect(done.citations).toContainEqual(
      expect.objectContaining({ docId: 'vellmore-ledgers', sourceUri: 'vellmore.pdf#page=2' }),
    );
    // protobuf.js's marker of a set optional field is no part of the contract.
    for (const citation of done.citations) expect(citation).not.toHaveProperty('_sourceUri');
  }, 120_000);
});
