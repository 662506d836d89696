import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadDocuments, documentIdFrom } from '../src/documents.js';
import { formatEvent } from '../src/format.js';
import { readSse } from '../src/sse-client.js';

const streamOf = (...parts: string[]) =>
  new ReadableStream<Uint8Array>({
    start(controller) {
      for (const part of parts) controller.enqueue(new TextEncoder().encode(part));
      controller.close();
    },
  });

describe('cli', () => {
  const dirs: string[] = [];
  afterEach(() => dirs.splice(0).forEach((dir) => rmSync(dir, { recursive: true, force: true })));

  it('sse - events split across chunks, comments and multi-line data parse as the spec says', async () => {
    const events = [];
    for await (const event of readSse(
      streamOf(
        ': heartbeat\n\nid: 1\nevent: tok',
        'en\ndata: {"text":"a"}\n\n',
        'id: 2\r\nevent: done\r\ndata: x\r\ndata: y\r\n\r\n',
      ),
    )) {
      events.push(event);
    }
    expect(events).toEqual([
      { id: '1', event: 'token', data: '{"text":"a"}' },
      { id: '2', event: 'done', data: 'x\ny' },
    ]);
  });

  it('ingest - markdown takes its first heading as title, JSONL gives one document per line', () => {
    const dir = mkdtempSync(join(tmpdir(), 'hopline-cli-'));
    dirs.push(dir);
    writeFileSync(join(dir, 'atlas notes.md'), '# Project Atlas\n\nOwned by Mira.');
    writeFileSync(
      join(dir, 'more.jsonl'),
      '{"docId":"a","title":"A","text":"alpha"}\n\n{"id":"b/c","text":"beta","version":7}\n',
    );
    writeFileSync(join(dir, 'image.png'), 'ignored');
    const docs = loadDocuments(dir);
    expect(docs.map((doc) => [doc.docId, doc.title])).toEqual([
      ['atlas-notes', 'Project Atlas'],
      ['a', 'A'],
      ['b-c', ''],
    ]);
    expect(docs[2]?.version).toBe(7);
    expect(docs[0]?.text).toBe('Owned by Mira.');
  });

  it('ingest - a malformed JSONL line is reported with its file and line number', () => {
    const dir = mkdtempSync(join(tmpdir(), 'hopline-cli-'));
    dirs.push(dir);
    writeFileSync(join(dir, 'bad.jsonl'), '{"docId":"a","text":"ok"}\n{"docId":"b"}\n');
    expect(() => loadDocuments(dir)).toThrow(/bad\.jsonl:2/);
  });

  it('ingest - document ids keep only characters that survive as message ids', () => {
    expect(documentIdFrom('notes/Q3 plan (final).md')).toBe('notes-Q3-plan-final');
  });

  it('format - a hop answer that is unknown says so instead of inventing one', () => {
    expect(formatEvent('hop_answer', { unknown: true, confidence: 0 })).toContain('UNKNOWN');
  });
});
