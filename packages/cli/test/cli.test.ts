import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { documentIdFrom, safeDocumentId } from '@hopline/documents';
import { loadDocuments } from '../src/documents.js';
import { formatEvent } from '../src/format.js';
import { retryAfterSeconds } from '../src/retry-after.js';
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

  it('ingest - names outside ASCII get stable, distinct ids instead of one shared "doc"', () => {
    const sky = documentIdFrom('天穹项目.md');
    const owner = documentIdFrom('负责人.md');
    expect(sky).toMatch(/^doc-[0-9a-f]{12}$/);
    expect(owner).not.toBe(sky);
    expect(documentIdFrom('天穹项目.md')).toBe(sky);
    // The same name typed on macOS (decomposed) and Linux (composed) is the same document.
    expect(documentIdFrom('Café.md'.normalize('NFD'))).toBe(documentIdFrom('Café.md'.normalize('NFC')));
    expect(documentIdFrom('Atlas 计划.md')).toMatch(/^Atlas-[0-9a-f]{12}$/);
  });

  it('ingest - "." and ".." are refused as document ids with a clear error', () => {
    expect(() => documentIdFrom('..md')).toThrow(/no usable document id/);
    expect(() => documentIdFrom('..')).toThrow(/no usable document id/);
    expect(() => documentIdFrom('(((.txt')).toThrow(/no usable document id/);
    expect(documentIdFrom('...')).toBe('...');
  });

  it('ingest - two files that would get the same document id are refused, naming both', () => {
    const dir = mkdtempSync(join(tmpdir(), 'hopline-cli-'));
    dirs.push(dir);
    writeFileSync(join(dir, 'q3 plan.md'), 'one');
    writeFileSync(join(dir, 'q3-plan.txt'), 'two');
    expect(() => loadDocuments(dir)).toThrow('document id "q3-plan" comes from both q3 plan.md and q3-plan.txt');
  });

  it('ingest - a JSONL docId keeps its dots: "faq.1" and "faq.2" are two documents, "www.example.com" is whole', () => {
    const dir = mkdtempSync(join(tmpdir(), 'hopline-cli-'));
    dirs.push(dir);
    writeFileSync(
      join(dir, 'faq.jsonl'),
      '{"docId":"faq.1","text":"first"}\n{"docId":"faq.2","text":"second"}\n{"id":"www.example.com","text":"site"}\n',
    );
    expect(loadDocuments(dir).map((doc) => doc.docId)).toEqual(['faq.1', 'faq.2', 'www.example.com']);
    expect(safeDocumentId('v1.2.3')).toBe('v1.2.3');
    // A file's name still loses its extension.
    expect(documentIdFrom('faq.1.md')).toBe('faq.1');
  });

  it('ingest - two lines of one JSONL file with the same document id are refused, naming both lines', () => {
    const dir = mkdtempSync(join(tmpdir(), 'hopline-cli-'));
    dirs.push(dir);
    writeFileSync(
      join(dir, 'faq.jsonl'),
      '{"docId":"faq","text":"first"}\n{"docId":"other","text":"x"}\n{"id":"faq","text":"again"}\n',
    );
    expect(() => loadDocuments(dir)).toThrow(
      'document id "faq" comes from both faq.jsonl:1 and faq.jsonl:3: rename one',
    );
  });

  it('ingest - Chinese-named files in one folder become separate documents', () => {
    const dir = mkdtempSync(join(tmpdir(), 'hopline-cli-'));
    dirs.push(dir);
    writeFileSync(join(dir, '天穹项目.md'), '# 天穹项目\n\n负责人是李明。');
    writeFileSync(join(dir, '李明.md'), '# 李明\n\n隶属于数据平台部。');
    const ids = loadDocuments(dir).map((doc) => doc.docId);
    expect(new Set(ids).size).toBe(2);
  });

  it('ingest - a path that does not exist is named in the error', () => {
    expect(() => loadDocuments(join(tmpdir(), 'hopline-no-such-folder'))).toThrow(
      /hopline-no-such-folder: no such file or folder/,
    );
  });

  it('ingest - Retry-After is waited a second at least, whether given in seconds or as an HTTP date', () => {
    const refusal = (status: number, retryAfter?: string) =>
      new Response(null, { status, headers: retryAfter === undefined ? {} : { 'Retry-After': retryAfter } });
    const now = Date.parse('Wed, 21 Oct 2026 07:28:00 GMT');
    expect(retryAfterSeconds(refusal(429, '5'), now)).toBe(5);
    // "0" would send the batch again at once, as often as it is refused, for free.
    expect(retryAfterSeconds(refusal(503, '0'), now)).toBe(1);
    expect(retryAfterSeconds(refusal(503, 'Wed, 21 Oct 2026 07:28:30 GMT'), now)).toBe(30);
    expect(retryAfterSeconds(refusal(429, 'Wed, 21 Oct 2026 07:27:00 GMT'), now)).toBe(1);
    for (const unusable of ['soon', '-1', undefined])
      expect(retryAfterSeconds(refusal(429, unusable), now)).toBeUndefined();
    expect(retryAfterSeconds(refusal(500, '5'), now)).toBeUndefined();
  });

  it('format - a cached answer, which arrives only in its done event, is printed and marked cached', () => {
    const done = {
      questionId: 'q1',
      answer: 'Platform Engineering [1].',
      citations: [{ index: 1, title: 'Mira Chen', docId: 'mira-chen', hop: 1 }],
      stopReason: 'SUFFICIENT',
      hops: 2,
      timings: { totalMs: 228 },
      cached: true,
    };
    const text = formatEvent('done', done, false);
    expect(text).toContain('cached');
    expect(text).toContain('Platform Engineering [1].');
    expect(text).toContain('[1] Mira Chen — mira-chen');
    // A streamed answer is not printed twice.
    expect(formatEvent('done', { ...done, cached: false }, true)).not.toContain('Platform Engineering [1].');
  });

  it('format - a hop answer that is unknown says so instead of inventing one', () => {
    expect(formatEvent('hop_answer', { unknown: true, confidence: 0 })).toContain('UNKNOWN');
  });

  it('format - a restarted question says so with its attempt and why; being accepted prints nothing', () => {
    expect(formatEvent('restarted', { attempt: 2, reason: 'the hop-reasoner stopped' })).toBe(
      '\nrestarted (attempt 2): the hop-reasoner stopped\n',
    );
    expect(formatEvent('accepted', { attempt: 1 })).toBe('');
  });
});
