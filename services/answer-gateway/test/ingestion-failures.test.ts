import { afterEach, describe, expect, it, vi } from 'vitest';
import type { DurableStream } from '@hopline/bus';
import {
  BusUnavailableError,
  codecs,
  DeadlineExceededError,
  UnavailableError,
  type IngestCommand__Output,
} from '@hopline/contracts';
import { acceptJsonDocuments, acceptNdjsonDocuments, type IngestTarget } from '../src/ingestion/accept-documents.js';
import { Problem } from '../src/problem.js';

/** An ingest stream whose publishes `fail` decides, keeping what it stored with the message ids. */
function ingestStream(fail: (stored: number) => Error | undefined) {
  const stored: Array<{ msgId: string; command: IngestCommand__Output }> = [];
  const seen = new Set<string>();
  const stream = {
    publish: async (_subject: string, data: Uint8Array, options: { msgId?: string }) => {
      await Promise.resolve();
      const failure = fail(stored.length);
      if (failure) throw failure;
      const msgId = options.msgId ?? '';
      if (seen.has(msgId)) return { duplicate: true, seq: stored.length };
      seen.add(msgId);
      stored.push({ msgId, command: codecs.ingestCommand.decode(data) });
      return { duplicate: false, seq: stored.length };
    },
  } as unknown as DurableStream;
  const target: IngestTarget = { streams: { ingest: stream, bodies: stream }, tenantId: 'acme', kbId: 'projects' };
  return { target, stored };
}

/** NDJSON lines, the later ones sent only after a pause, as a slow client's body arrives. */
async function* slowBody(lines: string[], pauseMs: number): AsyncGenerator<Buffer> {
  for (const [index, line] of lines.entries()) {
    if (index > 0) await new Promise((resolve) => setTimeout(resolve, pauseMs));
    yield Buffer.from(`${line}\n`);
  }
}

const line = (docId: string) => JSON.stringify({ docId, text: `${docId} is a document.` });

const unhandled: unknown[] = [];
const keep = (reason: unknown) => unhandled.push(reason);
process.on('unhandledRejection', keep);
afterEach(() => {
  unhandled.length = 0;
  vi.useRealTimers();
});

describe('answer-gateway ingestion - when the ingest stream does not take a write', () => {
  it('ingestion - a publish that fails while an NDJSON body is still arriving ends the request with a retryable 503, and no rejection goes unhandled', async () => {
    const { target } = ingestStream((stored) =>
      stored >= 1 ? new UnavailableError('stream has no leader') : undefined,
    );
    const refusal = await acceptNdjsonDocuments(
      target,
      slowBody([line('a'), line('b'), line('c')], 50),
      1_000_000,
    ).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(refusal).toBeInstanceOf(Problem);
    expect(refusal).toMatchObject({ status: 503, headers: { 'Retry-After': '1' } });
    expect((refusal as Problem).detail).toMatch(
      /stream has no leader; the 1 document\(s\) before the first that failed were accepted/,
    );
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(unhandled).toEqual([]);
  });

  it('ingestion - when one of the NDJSON publishes running side by side fails, the problem counts the documents before it, not every one that went in', async () => {
    const failing = new Set(['b']);
    const stored: string[] = [];
    const stream = {
      publish: async (_subject: string, data: Uint8Array) => {
        const docId = codecs.ingestCommand.decode(data).upsert?.docId ?? '';
        // b's write takes longer and fails; those after it land meanwhile.
        await new Promise((resolve) => setTimeout(resolve, docId === 'b' ? 30 : 1));
        if (failing.has(docId)) throw new UnavailableError('stream has no leader');
        stored.push(docId);
        return { duplicate: false, seq: stored.length };
      },
    } as unknown as DurableStream;
    const target: IngestTarget = { streams: { ingest: stream, bodies: stream }, tenantId: 'acme', kbId: 'projects' };
    const refusal = await acceptNdjsonDocuments(
      target,
      slowBody(['a', 'b', 'c', 'd', 'e'].map(line), 0),
      1_000_000,
    ).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(stored).toEqual(['a', 'c', 'd', 'e']);
    expect((refusal as Problem).detail).toBe(
      'the ingest stream did not take the write: stream has no leader; the 1 document(s) before the first that ' +
        'failed were accepted, and some after it may have been: send it and those after it again',
    );

    // A JSON batch is published in turn: the problem says how many went in.
    const json = ingestStream((count) => (count >= 2 ? new UnavailableError('stream has no leader') : undefined));
    const documents = ['a', 'b', 'c', 'd'].map((docId) => ({ docId, text: `${docId} is a document.` }));
    const jsonRefusal = await acceptJsonDocuments(json.target, { documents }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(json.stored.map((entry) => entry.command.upsert?.docId)).toEqual(['a', 'b']);
    expect((jsonRefusal as Problem).detail).toMatch(/; the first 2 document\(s\) were accepted, the rest not$/);
  });

  it('ingestion - a stream without a leader, a publish that timed out and an unreachable bus are each a 503 with Retry-After', async () => {
    const cases: Array<[Error, string]> = [
      [new UnavailableError('stream has no leader'), '1'],
      [new DeadlineExceededError('publish timed out'), '1'],
      [new BusUnavailableError('message bus unavailable'), '2'],
    ];
    for (const [error, retryAfter] of cases) {
      const { target } = ingestStream(() => error);
      const refusal = await acceptJsonDocuments(target, { docId: 'a', text: 'A document.' }).then(
        () => undefined,
        (failure: unknown) => failure,
      );
      expect(refusal, error.message).toMatchObject({ status: 503, headers: { 'Retry-After': retryAfter } });
    }
  });

  it('ingestion - one document id twice in one request without versions is stored twice, the later write with the higher version', async () => {
    const { target, stored } = ingestStream(() => undefined);
    // Both in one millisecond, as a fast machine stamps them.
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() });
    const accepted = await acceptJsonDocuments(target, {
      documents: [
        { docId: 'b', text: 'first' },
        { docId: 'b', text: 'second' },
      ],
    });
    expect(accepted.map((entry) => entry.duplicate)).toEqual([false, false]);
    const [first, second] = accepted;
    expect(second!.version).toBeGreaterThan(first!.version);
    expect(stored.map((entry) => entry.command.upsert?.text)).toEqual(['first', 'second']);
  });
});
