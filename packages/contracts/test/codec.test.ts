import { describe, expect, it } from 'vitest';
import {
  codecs,
  ingestMessageId,
  loadHoplineGrpc,
  questionOfReaders,
  subjects,
  subjectTemplate,
  ValidationError,
} from '../src/index.js';

describe('contracts', () => {
  it('codec - a QaEvent round-trips with the oneof name and enum strings gRPC would give', () => {
    const bytes = codecs.qaEvent.encode({
      questionId: 'q1',
      seq: 3,
      atUnixMs: 1_700_000_000_000,
      done: { answer: 'Paris [1]', stopReason: 'SUFFICIENT', hops: 2, citations: [{ index: 1, chunkId: 'c1' }] },
    });
    const event = codecs.qaEvent.decode(new Uint8Array(bytes));
    expect(event.event).toBe('done');
    expect(event.atUnixMs).toBe(1_700_000_000_000);
    expect(event.done?.stopReason).toBe('SUFFICIENT');
    expect(event.done?.citations[0]?.chunkId).toBe('c1');
    expect(event.done?.degradedReasons).toEqual([]);
  });

  it('codec - a message as decoded without its bytes is what decoding its bytes gives, and sized as they are', () => {
    const citation = { index: 1, chunkId: 'c1', docId: 'd', docVersion: 3, span: { start: 0, end: 4 }, hop: 2 };
    const events = [
      { questionId: 'q1', seq: 1, atUnixMs: 1_700_000_000_000, attempt: 1, accepted: {} },
      { questionId: 'q1', seq: 2, token: { text: 'Ünïcode 字 and a longer text '.repeat(20) } },
      { questionId: 'q1', seq: 3, hopAnswer: { hop: 1, answer: 'x', confidence: 0.123456789 } },
      { questionId: 'q1', seq: 4, citations: { citations: [citation, { ...citation, sourceUri: '' }] } },
      {
        questionId: 'q1',
        seq: 5,
        done: { answer: 'y [1]', stopReason: 'SUFFICIENT' as const, citations: [citation], degradedReasons: ['slow'] },
      },
    ];
    for (const event of events) {
      const bytes = codecs.qaEvent.encode(event);
      expect(codecs.qaEvent.asDecoded(event)).toEqual({
        value: codecs.qaEvent.decode(bytes),
        byteLength: bytes.length,
      });
    }
    const batch = codecs.qaEventBatch.encode({ events });
    expect(codecs.qaEventBatch.asDecoded({ events })).toEqual({
      value: codecs.qaEventBatch.decode(batch),
      byteLength: batch.length,
    });
  });

  it('codec - unset optional scores stay absent, set ones survive', () => {
    const bytes = codecs.retrieveResponse.encode({ chunks: [{ chunkId: 'a', scores: { bm25: 0, rrf: 0.5 } }] });
    const scores = codecs.retrieveResponse.decode(bytes).chunks[0]?.scores;
    expect(scores?.bm25).toBe(0);
    expect(scores?.rrf).toBe(0.5);
    expect(scores?.vector).toBeUndefined();
  });

  it('codec - malformed bytes fail with a validation error naming the type', () => {
    expect(() => codecs.askCommand.decode(Uint8Array.from([0xff, 0xff, 0xff]))).toThrow(ValidationError);
    expect(() => codecs.askCommand.decode(Uint8Array.from([0xff, 0xff, 0xff]))).toThrow(/AskCommand/);
  });

  it('grpc - the three services load from the same protos', () => {
    const pkg = loadHoplineGrpc();
    expect(pkg.hopline.v1.QueryUnderstanding.service.Analyze.path).toBe('/hopline.v1.QueryUnderstanding/Analyze');
    expect(pkg.hopline.v1.Reranker.service.Rerank.path).toBe('/hopline.v1.Reranker/Rerank');
    expect(pkg.hopline.v1.AnswerGateway.service.Ask.responseStream).toBe(true);
  });

  it('subjects - ids that could add tokens or wildcards are refused', () => {
    expect(subjects.events('q-1')).toBe('hopline.qa.q-1.events');
    expect(() => subjects.events('q.>')).toThrow(ValidationError);
    expect(() => subjects.ingest('tenant-a', '*')).toThrow(ValidationError);
    expect(subjectTemplate(subjects.cancel('abc'))).toBe('hopline.qa.{question}.cancel');
    expect(subjectTemplate(subjects.ingest('t', 'kb'))).toBe('hopline.kb.{tenant}.{kb}.ingest');
  });

  it('subjects - a readers ping names its question; any other subject names none', () => {
    expect(questionOfReaders(subjects.readers('q-1'))).toBe('q-1');
    expect(questionOfReaders(subjects.events('q-1'))).toBeUndefined();
    expect(questionOfReaders('hopline.qa.readers')).toBeUndefined();
  });

  it('ingest message ids - the same document id and version in two tenants or kbs never collide', () => {
    const ids = new Set([
      ingestMessageId('upsert', 'tenant-a', 'kb', 'readme', 1),
      ingestMessageId('upsert', 'tenant-b', 'kb', 'readme', 1),
      ingestMessageId('upsert', 'tenant-a', 'other', 'readme', 1),
      ingestMessageId('delete', 'tenant-a', 'kb', 'readme', 1),
    ]);
    expect(ids.size).toBe(4);
  });

  it('ingest message ids - the upsert of a document named "x:delete" and the delete of "x" never collide', () => {
    expect(ingestMessageId('upsert', 't', 'kb', 'x:delete', 5)).not.toBe(ingestMessageId('delete', 't', 'kb', 'x', 5));
    expect(ingestMessageId('upsert', 't', 'kb', 'x:delete:5', 1)).not.toBe(
      ingestMessageId('delete', 't', 'kb', 'x', 5),
    );
  });

  it("subjects - a worker's own retrieve subject is one token per worker, and its template has none", () => {
    expect(subjects.retrieveAt('worker-1')).toBe('hopline.retrieve.worker.worker-1');
    expect(() => subjects.retrieveAt('a.b')).toThrow(ValidationError);
    expect(subjectTemplate(subjects.retrieveAt('worker-1'))).toBe('hopline.retrieve.worker.{worker}');
  });
});
