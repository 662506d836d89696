import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Chunk__Output } from '@hopline/contracts';
import { CancelledError, DeadlineExceededError, UnavailableError, ValidationError } from '@hopline/contracts';
import { instrument, startTelemetry } from '@hopline/telemetry';
import { trace } from '@opentelemetry/api';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { RelevanceScorer } from '../src/index.js';
import {
  compressToBudget,
  createCrossEncoderClient,
  createDeadlineGuard,
  createLexicalScorer,
  createReranker,
  inProcessGuard,
  jaccard,
  minMaxScale,
  selectByMmr,
} from '../src/index.js';
import { never } from './fixtures.js';

const chunk = (id: string, text: string, title = ''): Chunk__Output => ({
  chunkId: id,
  tenantId: 't1',
  kbId: 'kb1',
  docId: id,
  docVersion: 1,
  title,
  text,
  span: { start: 100, end: 100 + text.length },
  dedupeKey: id,
  scores: { bm25: 3, rrf: 0.02 },
  foundBy: 'HYBRID',
  hop: 1,
  effectiveDate: '',
  sourceUri: '',
});

describe('createLexicalScorer', () => {
  const scorer = createLexicalScorer();

  it('lexical scorer - a passage covering every part of the question outranks one repeating a part', async () => {
    const [full, partial, none] = await scorer.score(
      'which coach won the league title',
      ['The coach won the league title in 1998.', 'The league league league was founded.', 'Bread and butter.'],
      never,
    );
    expect(full).toBeGreaterThan(partial as number);
    expect(partial).toBeGreaterThan(none as number);
    expect(none).toBe(0);
  });

  it('lexical scorer - a query without terms scores everything zero', async () => {
    expect(await scorer.score('the of', ['a', 'b'], never)).toEqual([0, 0]);
  });
});

describe('createCrossEncoderClient', () => {
  let url = '';
  let reply: (body: Record<string, unknown>) => { status: number; body: unknown; delayMs?: number } = () => ({
    status: 200,
    body: [],
  });
  const seen: Array<{ url: string; body: Record<string, unknown>; auth: string | undefined }> = [];
  const server = createServer((request, response) => {
    let raw = '';
    request.on('data', (part: Buffer) => (raw += part.toString()));
    request.on('end', () => {
      const body = JSON.parse(raw) as Record<string, unknown>;
      seen.push({ url: request.url ?? '', body, auth: request.headers.authorization });
      const answer = reply(body);
      const send = (): void => {
        response.writeHead(answer.status, { 'content-type': 'application/json' });
        response.end(typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body));
      };
      if (answer.delayMs) setTimeout(send, answer.delayMs);
      else send();
    });
  });
  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('cross-encoder - TEI shape: {query, texts} in, [{index, score}] out, scores back in input order', async () => {
    reply = () => ({
      status: 200,
      body: [
        { index: 1, score: 0.9 },
        { index: 0, score: 0.2 },
      ],
    });
    const client = createCrossEncoderClient({ url: `${url}/`, api: 'tei', apiKey: 'k' });
    expect(await client.score('q', ['a', 'b'], never)).toEqual([0.2, 0.9]);
    expect(seen.at(-1)).toMatchObject({ url: '/rerank', body: { query: 'q', texts: ['a', 'b'] }, auth: 'Bearer k' });
  });

  it('cross-encoder - Cohere shape: {model, query, documents} in, {results} out', async () => {
    reply = () => ({
      status: 200,
      body: {
        results: [
          { index: 0, relevance_score: 0.7 },
          { index: 1, relevance_score: 0.1 },
        ],
      },
    });
    const client = createCrossEncoderClient({ url, api: 'cohere', model: 'rerank-v3' });
    expect(await client.score('q', ['a', 'b'], never)).toEqual([0.7, 0.1]);
    expect(seen.at(-1)?.body).toMatchObject({ model: 'rerank-v3', query: 'q', documents: ['a', 'b'], top_n: 2 });
    expect(client.name).toBe('cross-encoder:rerank-v3');
  });

  it('cross-encoder - a 5xx is UnavailableError, a 429 resource_exhausted, a 400 a ValidationError', async () => {
    const client = createCrossEncoderClient({ url, api: 'tei' });
    reply = () => ({ status: 503, body: 'overloaded' });
    await expect(client.score('q', ['a'], never)).rejects.toBeInstanceOf(UnavailableError);
    reply = () => ({ status: 429, body: 'slow down' });
    await expect(client.score('q', ['a'], never)).rejects.toMatchObject({ code: 'resource_exhausted' });
    reply = () => ({ status: 400, body: 'too long' });
    await expect(client.score('q', ['a'], never)).rejects.toBeInstanceOf(ValidationError);
  });

  it('cross-encoder - a timeout or a route not found counts against the breaker; only a refused text does not', async () => {
    const client = createCrossEncoderClient({ url, api: 'tei' });
    reply = () => ({ status: 408, body: 'request timeout' });
    await expect(client.score('q', ['a'], never)).rejects.toBeInstanceOf(DeadlineExceededError);
    for (const status of [404, 409]) {
      reply = () => ({ status, body: 'not found' });
      await expect(client.score('q', ['a'], never)).rejects.toBeInstanceOf(UnavailableError);
    }
    for (const status of [413, 422]) {
      reply = () => ({ status, body: 'too long' });
      await expect(client.score('q', ['a'], never)).rejects.toBeInstanceOf(ValidationError);
    }
  });

  it('cross-encoder - a malformed body or a missing score is UnavailableError', async () => {
    const client = createCrossEncoderClient({ url, api: 'tei' });
    reply = () => ({ status: 200, body: { unexpected: true } });
    await expect(client.score('q', ['a'], never)).rejects.toThrow(/unexpected body/);
    reply = () => ({ status: 200, body: [{ index: 0, score: 1 }] });
    await expect(client.score('q', ['a', 'b'], never)).rejects.toThrow(/no score for text 1/);
    reply = () => ({ status: 200, body: [{ index: 5, score: 1 }] });
    await expect(client.score('q', ['a'], never)).rejects.toThrow(/scored index 5/);
  });

  it('cross-encoder - an unreachable server is UnavailableError', async () => {
    const client = createCrossEncoderClient({ url: 'http://127.0.0.1:1', api: 'tei' });
    await expect(client.score('q', ['a'], never)).rejects.toBeInstanceOf(UnavailableError);
  });

  it('cross-encoder - aborting the signal ends the call with the abort reason', async () => {
    reply = () => ({ status: 200, body: [{ index: 0, score: 1 }], delayMs: 2_000 });
    const client = createCrossEncoderClient({ url, api: 'tei' });
    const controller = new AbortController();
    const pending = client.score('q', ['a'], controller.signal);
    controller.abort(new CancelledError('caller left'));
    await expect(pending).rejects.toThrow('caller left');
    const plain = new AbortController();
    const second = client.score('q', ['a'], plain.signal);
    plain.abort();
    await expect(second).rejects.toBeInstanceOf(CancelledError);
  });

  // Passage n scores n / 100, so that every score says which text it belongs to.
  const passages = (count: number): string[] => Array.from({ length: count }, (_, n) => `passage ${n}`);
  const scoreOf = (text: string): number => Number(text.split(' ')[1]) / 100;
  const refused = (count: number, cap: number) => ({
    status: 413,
    body: { error: `batch size ${count} > maximum allowed batch size ${cap}`, error_type: 'Validation' },
  });
  /** Answers as TEI does, best first, and refuses more texts than its `--max-client-batch-size`. */
  const teiCapped = (cap: number) => (body: Record<string, unknown>) => {
    const texts = body.texts as string[];
    if (texts.length > cap) return refused(texts.length, cap);
    const pairs = texts.map((text, index) => ({ index, score: scoreOf(text) }));
    return { status: 200, body: pairs.sort((a, b) => b.score - a.score) };
  };
  const sentSince = (before: number) => seen.slice(before).map((request) => request.body);

  it('cross-encoder - TEI: 70 texts to a server that takes at most 32 go in 3 requests, and the 70 scores come back in input order', async () => {
    reply = teiCapped(32);
    const before = seen.length;
    const texts = passages(70);
    const client = createCrossEncoderClient({ url, api: 'tei', maxBatch: 32 });
    expect(await client.score('q', texts, never)).toEqual(texts.map(scoreOf));
    const sent = sentSince(before).map((body) => body.texts as string[]);
    expect(sent).toHaveLength(3);
    expect(sent.every((batch) => batch.length <= 32)).toBe(true);
    expect(sent.flat().sort()).toEqual([...texts].sort());
  });

  it('cross-encoder - Cohere: each request asks for the top_n of its own documents, and the scores come back in input order', async () => {
    reply = (body) => {
      const documents = body.documents as string[];
      if (documents.length > 10) return refused(documents.length, 10);
      const results = documents.map((text, index) => ({ index, relevance_score: scoreOf(text) }));
      return { status: 200, body: { results: results.reverse().slice(0, body.top_n as number) } };
    };
    const before = seen.length;
    const texts = passages(25);
    const client = createCrossEncoderClient({ url, api: 'cohere', model: 'rerank-v3', maxBatch: 10 });
    expect(await client.score('q', texts, never)).toEqual(texts.map(scoreOf));
    const sent = sentSince(before);
    expect(sent).toHaveLength(3);
    for (const body of sent) {
      expect((body.documents as string[]).length).toBeLessThanOrEqual(10);
      expect(body).toMatchObject({ model: 'rerank-v3', top_n: (body.documents as string[]).length });
    }
  });

  it('cross-encoder - one batch refused or failing fails the whole call with its error, and the batches still out are aborted', async () => {
    const texts = passages(70);
    const pending: AbortSignal[] = [];
    // The batch holding passage 40 answers at once; the others only end when aborted.
    const answering =
      (status: number, detail: string): typeof fetch =>
      (_input, init) => {
        const batch = (JSON.parse(init?.body as string) as { texts: string[] }).texts;
        if (batch.includes('passage 40')) return Promise.resolve(new Response(detail, { status }));
        const signal = init?.signal as AbortSignal;
        pending.push(signal);
        return new Promise((_resolve, reject) => signal.addEventListener('abort', () => reject(signal.reason)));
      };
    const client = (status: number, detail: string) =>
      createCrossEncoderClient({ url, api: 'tei', maxBatch: 32, fetch: answering(status, detail) });
    await expect(client(503, 'overloaded').score('q', texts, never)).rejects.toBeInstanceOf(UnavailableError);
    expect(pending).toHaveLength(2);
    expect(pending.every((signal) => signal.aborted)).toBe(true);
    await expect(client(429, 'slow down').score('q', texts, never)).rejects.toMatchObject({
      code: 'resource_exhausted',
    });
    await expect(client(413, 'batch size too large').score('q', texts, never)).rejects.toBeInstanceOf(ValidationError);
  });

  it('cross-encoder - a batch is held to its own indexes: a server numbering a later batch from the call start fails the call', async () => {
    const texts = passages(70);
    const offsets = new Map(texts.map((text, index) => [text, index]));
    reply = (body) => ({
      status: 200,
      body: (body.texts as string[]).map((text) => ({ index: offsets.get(text), score: scoreOf(text) })),
    });
    const client = createCrossEncoderClient({ url, api: 'tei', maxBatch: 32 });
    await expect(client.score('q', texts, never)).rejects.toThrow(/scored index \d+ of \d+ texts/);
    // A text left unscored is named by its place in the call, not in its batch.
    reply = (body) => ({
      status: 200,
      body: (body.texts as string[])
        .map((text, index) => ({ index, score: scoreOf(text), text }))
        .filter(({ text }) => text !== 'passage 50')
        .map(({ index, score }) => ({ index, score })),
    });
    await expect(client.score('q', texts, never)).rejects.toThrow(/no score for text 50$/);
  });

  it('cross-encoder - a batch cap below one text is refused when the client is made', () => {
    expect(() => createCrossEncoderClient({ url, api: 'tei', maxBatch: 0 })).toThrow(RangeError);
  });

  it('cross-encoder - no texts, no call', async () => {
    const before = seen.length;
    expect(await createCrossEncoderClient({ url, api: 'tei' }).score('q', [], never)).toEqual([]);
    expect(seen.length).toBe(before);
  });
});

describe('selectByMmr', () => {
  const sets = { a: new Set(['x', 'y']), a2: new Set(['x', 'y']), b: new Set(['z']) };
  const similarity = (p: keyof typeof sets, q: keyof typeof sets): number => jaccard(sets[p], sets[q]);

  it('mmr - scaling maps the best to 1 and the worst to 0', () => {
    expect(minMaxScale([2, 4, 3])).toEqual([0, 1, 0.5]);
    expect(minMaxScale([5, 5])).toEqual([1, 1]);
  });

  it('mmr - a near-duplicate of the best item gives way to a different one', () => {
    const picked = selectByMmr<keyof typeof sets>(
      [
        { item: 'a', relevance: 1 },
        { item: 'a2', relevance: 0.95 },
        { item: 'b', relevance: 0.6 },
      ],
      { lambda: 0.5, keep: 2, similarity },
    );
    expect(picked).toEqual(['a', 'b']);
  });

  it('mmr - lambda 1 is plain relevance order', () => {
    const picked = selectByMmr<keyof typeof sets>(
      [
        { item: 'b', relevance: 0.6 },
        { item: 'a', relevance: 1 },
        { item: 'a2', relevance: 0.95 },
      ],
      { lambda: 1, keep: 3, similarity },
    );
    expect(picked).toEqual(['a', 'a2', 'b']);
  });

  it('mmr - rejects lambda outside [0, 1]', () => {
    expect(() => selectByMmr([{ item: 'a', relevance: 1 }], { lambda: 2, keep: 1, similarity: () => 0 })).toThrow(
      RangeError,
    );
  });
});

describe('compressToBudget', () => {
  it('compression - keeps whole chunks that fit and cuts the next one at a sentence end', () => {
    const first = chunk('a', 'one two three four five six seven eight nine ten.');
    const long = Array.from({ length: 10 }, (_, i) => `Sentence ${i} has exactly five words.`).join(' ');
    const result = compressToBudget([first, chunk('b', long), chunk('c', 'never reached')], 40);
    expect(result.chunks.map((c) => c.chunkId)).toEqual(['a', 'b']);
    const cut = result.chunks[1] as Chunk__Output;
    // Six tokens a sentence ("Sentence", the number, four words): 30 tokens of room hold five.
    expect(cut.text).toBe(Array.from({ length: 5 }, (_, i) => `Sentence ${i} has exactly five words.`).join(' '));
    expect(cut.span).toEqual({ start: 100, end: 100 + cut.text.length });
    expect(result).toMatchObject({ tokens: 40, truncated: 1, dropped: 1 });
  });

  it('compression - too little budget left drops the chunk rather than keeping a scrap', () => {
    const result = compressToBudget([chunk('a', 'word '.repeat(30)), chunk('b', 'word '.repeat(30))], 40);
    expect(result.chunks.map((c) => c.chunkId)).toEqual(['a']);
    expect(result).toMatchObject({ truncated: 0, dropped: 1 });
  });
});

describe('createReranker', () => {
  const guard = createDeadlineGuard();
  const soon = (): number => Date.now() + 2_000;
  const candidates = [
    chunk('bread', 'The bakery sells sourdough bread.', 'Bakery'),
    chunk('coach', 'The coach won the league title in 1998.', 'Coach'),
    chunk('coach-copy', 'The coach won the league title in 1998.', 'Coach'),
    chunk('league', 'The league was founded in 1920.', 'League'),
  ];
  const fixed = (name: string, scores: number[]): RelevanceScorer => ({ name, score: async () => scores });

  it('reranker - where spans are not recorded, MMR opens no span of its own', async () => {
    const telemetry = startTelemetry({ serviceName: 'reranker', detectResources: false });
    try {
      // Under a question's span, as the reranker's gRPC handler runs: unrecorded, that is its parent's.
      await instrument('question', {}, async () => {
        const getTracer = vi.spyOn(trace, 'getTracer');
        const reranker = createReranker({ scorer: createLexicalScorer(), guard: inProcessGuard });
        const { chunks } = await reranker.rerank({
          query: 'coach league title',
          chunks: candidates,
          deadlineUnixMs: soon(),
        });
        expect(chunks.length).toBeGreaterThan(1);
        expect(getTracer).not.toHaveBeenCalled();
        getTracer.mockRestore();
      });
    } finally {
      await telemetry.shutdown();
    }
  });

  it('reranker - sets the rerank score on copies, keeps earlier scores, and drops near-duplicates by MMR', async () => {
    const reranker = createReranker({
      scorer: fixed('ce', [0.1, 0.9, 0.89, 0.5]),
      guard,
      defaults: { keep: 3, mmrKeep: 2, lambda: 0.5 },
    });
    const result = await reranker.rerank({ query: 'who won the league', chunks: candidates, deadlineUnixMs: soon() });
    expect(result.chunks.map((c) => c.chunkId)).toEqual(['coach', 'league']);
    expect(result.chunks[0]?.scores).toEqual({ bm25: 3, rrf: 0.02, rerank: 0.9 });
    expect(candidates[1]?.scores?.rerank).toBeUndefined();
    expect(result).toMatchObject({ fallback: false, fallbackReason: '', scorer: 'ce' });
  });

  it('reranker - a scorer that works in the process, under the in-process guard, scores with the caller signal and is refused past its deadline or cancelled', async () => {
    const signals: AbortSignal[] = [];
    const local: RelevanceScorer = {
      name: 'local',
      score: async (_query, texts, signal) => {
        signals.push(signal);
        return texts.map((_text, index) => index);
      },
    };
    const reranker = createReranker({ scorer: local, guard: inProcessGuard, defaults: { keep: 2, mmrKeep: 2 } });
    const caller = new AbortController();
    const ask = { query: 'who won the league', chunks: candidates, signal: caller.signal };
    const result = await reranker.rerank({ ...ask, deadlineUnixMs: soon() });
    expect(result.chunks.map((c) => c.chunkId)).toEqual(['league', 'coach-copy']);
    expect(signals).toEqual([caller.signal]);
    await expect(reranker.rerank({ ...ask, deadlineUnixMs: Date.now() - 1 })).rejects.toBeInstanceOf(
      DeadlineExceededError,
    );
    caller.abort();
    await expect(reranker.rerank({ ...ask, deadlineUnixMs: soon() })).rejects.toBeInstanceOf(CancelledError);
    expect(signals).toHaveLength(1);
  });

  it('reranker - when the cross-encoder is down the lexical scorer ranks and the response says so', async () => {
    const down: RelevanceScorer = {
      name: 'cross-encoder:tei',
      score: () => Promise.reject(new UnavailableError('connection refused')),
    };
    const reranker = createReranker({ scorer: down, fallback: createLexicalScorer(), guard });
    const result = await reranker.rerank({
      query: 'who won the league title',
      chunks: candidates,
      deadlineUnixMs: soon(),
    });
    expect(result.fallback).toBe(true);
    expect(result.scorer).toBe('lexical');
    expect(result.fallbackReason).toBe('cross-encoder:tei failed (unavailable): connection refused');
    expect(result.chunks[0]?.chunkId).toBe('coach');
  });

  it('reranker - a scorer past the deadline falls back too', async () => {
    const slow: RelevanceScorer = {
      name: 'slow',
      score: (_q, _t, signal) =>
        new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason))),
    };
    const reranker = createReranker({ scorer: slow, fallback: createLexicalScorer(), guard });
    const result = await reranker.rerank({ query: 'league', chunks: candidates, deadlineUnixMs: Date.now() + 30 });
    expect(result.fallbackReason).toMatch(/^slow failed \(deadline_exceeded\)/);
  });

  it('reranker - without a fallback the failure propagates', async () => {
    const down: RelevanceScorer = { name: 'ce', score: () => Promise.reject(new UnavailableError('down')) };
    await expect(
      createReranker({ scorer: down, guard }).rerank({ query: 'q', chunks: candidates, deadlineUnixMs: soon() }),
    ).rejects.toBeInstanceOf(UnavailableError);
  });

  it('reranker - a cancelled caller gets CancelledError, not a fallback ranking', async () => {
    const slow: RelevanceScorer = { name: 'slow', score: () => new Promise(() => undefined) };
    const controller = new AbortController();
    const pending = createReranker({ scorer: slow, fallback: createLexicalScorer(), guard }).rerank({
      query: 'q',
      chunks: candidates,
      deadlineUnixMs: soon(),
      signal: controller.signal,
    });
    controller.abort();
    await expect(pending).rejects.toBeInstanceOf(CancelledError);
  });

  it('reranker - topN and the token budget bound the output; defaults keep 8 then 6', async () => {
    const many = Array.from({ length: 12 }, (_, i) => chunk(`c${i}`, `Topic${i} unique words number ${i} apart.`));
    const scores = many.map((_, i) => 12 - i);
    const reranker = createReranker({ scorer: fixed('ce', scores), guard });
    expect((await reranker.rerank({ query: 'q', chunks: many, deadlineUnixMs: soon() })).chunks).toHaveLength(6);
    expect((await reranker.rerank({ query: 'q', chunks: many, topN: 3, deadlineUnixMs: soon() })).chunks).toHaveLength(
      3,
    );
    const budgeted = await reranker.rerank({ query: 'q', chunks: many, tokenBudget: 12, deadlineUnixMs: soon() });
    expect(budgeted.chunks).toHaveLength(2);
  });

  it('reranker - a scorer returning the wrong number of scores is an error', async () => {
    await expect(
      createReranker({ scorer: fixed('ce', [1]), guard }).rerank({
        query: 'q',
        chunks: candidates,
        deadlineUnixMs: soon(),
      }),
    ).rejects.toThrow(/returned 1 scores for 4 texts/);
  });

  it('reranker - nothing to rank returns nothing; an empty query is a validation error', async () => {
    const reranker = createReranker({ scorer: fixed('ce', []), guard });
    expect((await reranker.rerank({ query: 'q', chunks: [], deadlineUnixMs: soon() })).chunks).toEqual([]);
    await expect(reranker.rerank({ query: ' ', chunks: candidates, deadlineUnixMs: soon() })).rejects.toBeInstanceOf(
      ValidationError,
    );
  });
});
