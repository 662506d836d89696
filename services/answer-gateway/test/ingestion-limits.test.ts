import { describe, expect, it } from 'vitest';
import type { Bus } from '@hopline/bus';
import { loadConfig } from '@hopline/config';
import { codecs, documentBodyStream, subjects, type IngestCommand__Output } from '@hopline/contracts';
import { configSchema } from '../src/config.js';
import { bearer, startTestGateway, type TestKey } from './support/harness.js';

const post = (baseUrl: string, key: TestKey, body: string, contentType: string) =>
  fetch(`${baseUrl}/v1/kbs/projects/documents`, {
    method: 'POST',
    headers: { ...bearer(key), 'Content-Type': contentType },
    body,
    duplex: 'half',
  } as RequestInit);

const ndjson = (documents: unknown[]) => `${documents.map((document) => JSON.stringify(document)).join('\n')}\n`;

/** The first `count` ingest commands stored for the kb, oldest first. */
async function storedCommands(bus: Bus, key: TestKey, count: number): Promise<IngestCommand__Output[]> {
  const stream = await bus.durableStream();
  const reading = new AbortController();
  const commands: IngestCommand__Output[] = [];
  for await (const message of stream.follow(subjects.ingest(key.tenantId, 'projects'), { signal: reading.signal })) {
    commands.push(codecs.ingestCommand.decode(message.data));
    if (commands.length === count) reading.abort();
  }
  return commands;
}

async function problemOf(response: Response): Promise<{ status: number; type: string; detail: string }> {
  expect(response.headers.get('content-type')).toBe('application/problem+json');
  return (await response.json()) as { status: number; type: string; detail: string };
}

describe('answer-gateway ingestion - limits and streamed uploads', () => {
  it('ingestion - by default a document may be 50 MiB, apart from the 64 KiB every other request may be', () => {
    expect(loadConfig('answer-gateway', configSchema, {})).toMatchObject({
      INGEST_MAX_DOCUMENT_BYTES: 50 * 1024 * 1024,
      MAX_BODY_BYTES: 65_536,
    });
  });

  it('ingestion - a document larger than the ask body limit is taken, since ingestion has its own limit', async () => {
    await using t = await startTestGateway({ config: { MAX_BODY_BYTES: 65_536 } });
    const text = 'Manuals and contracts are long. '.repeat(6_400); // about 200 KB
    const accepted = await post(t.baseUrl, t.keys.alice, JSON.stringify({ docId: 'manual', text }), 'application/json');
    expect(accepted.status).toBe(202);
    const [command] = await storedCommands(t.bus, t.keys.alice, 1);
    expect(command?.upsert?.text).toBe(text);

    const ask = await fetch(`${t.baseUrl}/v1/ask`, {
      method: 'POST',
      headers: { ...bearer(t.keys.alice), 'Content-Type': 'application/json' },
      body: JSON.stringify({ question: 'x'.repeat(70_000) }),
    });
    expect(ask.status).toBe(413);
    expect((await problemOf(ask)).detail).toBe('the body exceeds 65536 bytes (MAX_BODY_BYTES)');
  });

  it('ingestion - a JSON body over INGEST_MAX_DOCUMENT_BYTES is refused with a 413 that names the limit', async () => {
    await using t = await startTestGateway({ config: { INGEST_MAX_DOCUMENT_BYTES: 10_000 } });
    const refused = await post(
      t.baseUrl,
      t.keys.alice,
      JSON.stringify({ docId: 'big', text: 'z'.repeat(20_000) }),
      'application/json',
    );
    expect(refused.status).toBe(413);
    const problem = await problemOf(refused);
    expect(problem.type).toBe('urn:hopline:problem:payload-too-large');
    expect(problem.detail).toBe('the body exceeds 10000 bytes (INGEST_MAX_DOCUMENT_BYTES)');
  });

  it('ingestion - an NDJSON stream of 2,000 documents, larger than any one document limit, is taken line by line', async () => {
    await using t = await startTestGateway({ config: { INGEST_MAX_DOCUMENT_BYTES: 10_000 } });
    const documents = Array.from({ length: 2_000 }, (_, i) => ({
      docId: `doc-${i}`,
      text: `Document ${i}. `.repeat(20),
    }));
    const body = ndjson(documents);
    expect(body.length).toBeGreaterThan(50 * 10_000);
    const response = await post(t.baseUrl, t.keys.alice, body, 'application/x-ndjson');
    expect(response.status).toBe(202);
    const { accepted } = (await response.json()) as { accepted: Array<{ docId: string; duplicate: boolean }> };
    expect(new Set(accepted.map((entry) => entry.docId))).toEqual(new Set(documents.map((d) => d.docId)));
    const commands = await storedCommands(t.bus, t.keys.alice, 2_000);
    expect(new Set(commands.map((command) => command.upsert?.docId)).size).toBe(2_000);
  });

  it('ingestion - a line over the document limit stops the stream with a 413 naming the line, the limit and what went in before', async () => {
    await using t = await startTestGateway({ config: { INGEST_MAX_DOCUMENT_BYTES: 10_000 } });
    const body = ndjson([
      { docId: 'one', text: 'First.' },
      { docId: 'two', text: 'Second.' },
      { docId: 'huge', text: 'h'.repeat(20_000) },
      { docId: 'four', text: 'Never read.' },
    ]);
    const refused = await post(t.baseUrl, t.keys.alice, body, 'application/x-ndjson');
    expect(refused.status).toBe(413);
    expect((await problemOf(refused)).detail).toBe(
      'the document on line 3 exceeds 10000 bytes (INGEST_MAX_DOCUMENT_BYTES); the 2 document(s) before it were ' +
        'accepted, the rest was not read',
    );
    const commands = await storedCommands(t.bus, t.keys.alice, 2);
    expect(commands.map((command) => command.upsert?.docId).sort()).toEqual(['one', 'two']);
  });

  it('ingestion - an invalid NDJSON line is refused by its line number', async () => {
    await using t = await startTestGateway();
    const body = `${JSON.stringify({ docId: 'one', text: 'First.' })}\n\n{"docId": "two", "text": ""}\n`;
    const refused = await post(t.baseUrl, t.keys.alice, body, 'application/x-ndjson');
    expect(refused.status).toBe(400);
    expect((await problemOf(refused)).detail).toBe(
      'line 3: text: text is empty or only whitespace; the 1 document(s) before it were accepted, the rest was not read',
    );
    const blank = await post(
      t.baseUrl,
      t.keys.alice,
      ndjson([{ docId: 'blank', text: ' \n\t ' }]),
      'application/x-ndjson',
    );
    expect(blank.status).toBe(400);
    expect((await problemOf(blank)).detail).toMatch(/^line 1: text: text is empty or only whitespace;/);
    const notJson = await post(t.baseUrl, t.keys.alice, '{"docId": \n', 'application/x-ndjson');
    expect(notJson.status).toBe(400);
    expect((await problemOf(notJson)).detail).toMatch(/^line 1: /);
  });

  it('ingestion - a body too large for one bus message travels in parts ahead of its command, and joins back whole', async () => {
    await using t = await startTestGateway();
    // Multi-byte characters straddle the part boundaries: a part must never cut one in two.
    const text = 'Ünïcödé lines of a long report, 第十章. '.repeat(80_000);
    const utf8Bytes = Buffer.byteLength(text);
    expect(utf8Bytes).toBeGreaterThan(3 * 1024 * 1024);
    const accepted = await post(t.baseUrl, t.keys.alice, JSON.stringify({ docId: 'report', text }), 'application/json');
    expect(accepted.status).toBe(202);

    const [command] = await storedCommands(t.bus, t.keys.alice, 1);
    const upsert = command?.upsert;
    expect(upsert?.text).toBe('');
    expect(upsert?.bodyParts).toBeGreaterThanOrEqual(7);
    const bodies = await t.bus.durableStream(documentBodyStream);
    const reading = new AbortController();
    const parts: Uint8Array[] = [];
    const subject = subjects.documentBody(t.keys.alice.tenantId, 'projects', upsert?.bodyId ?? '');
    for await (const message of bodies.follow(subject, { signal: reading.signal })) {
      parts.push(message.data);
      expect(() => new TextDecoder('utf-8', { fatal: true }).decode(message.data)).not.toThrow();
      if (parts.length === upsert?.bodyParts) reading.abort();
    }
    expect(Buffer.concat(parts).toString('utf8')).toBe(text);
  });

  it('ingestion - a body that is neither JSON nor NDJSON is refused with the types it may be', async () => {
    await using t = await startTestGateway();
    const refused = await post(t.baseUrl, t.keys.alice, 'text', 'text/plain');
    expect(refused.status).toBe(415);
    expect((await problemOf(refused)).detail).toBe(
      'send Content-Type: application/json, application/x-ndjson with one document per line, or ' +
        'multipart/form-data with files (PDF, DOCX, HTML, markdown, text)',
    );
  });

  it('ingestion - pages or sections of a parsed file travel with the document; out of order they are refused', async () => {
    await using t = await startTestGateway();
    const text = 'Installing the pump.\n\nServicing the pump.';
    const sections = [
      { start: 0, fragment: 'page=1' },
      { start: 22, fragment: 'page=2' },
    ];
    const body = { docId: 'manual', text, sourceUri: 'manual.pdf', sections };
    expect((await post(t.baseUrl, t.keys.alice, JSON.stringify(body), 'application/json')).status).toBe(202);
    const [command] = await storedCommands(t.bus, t.keys.alice, 1);
    expect(command?.upsert?.layout?.sections).toEqual(sections);

    const reversed = { ...body, sections: [...sections].reverse() };
    const refused = await post(t.baseUrl, t.keys.alice, JSON.stringify(reversed), 'application/json');
    expect(refused.status).toBe(400);
    expect((await problemOf(refused)).detail).toBe('sections: sections must start in increasing order within the text');
  });
});
