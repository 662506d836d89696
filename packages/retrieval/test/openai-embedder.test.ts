import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CancelledError, UnavailableError, ValidationError } from '@hopline/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OpenAiEmbedder } from '../src/index.js';
import { never } from './fixtures.js';

describe('OpenAiEmbedder', () => {
  let baseURL = '';
  let reply: (body: { input: string[]; model: string; dimensions?: number }) => {
    status: number;
    body: unknown;
    hang?: boolean;
  } = () => ({ status: 200, body: {} });
  const requests: Array<{
    path: string;
    body: { input: string[]; model: string; dimensions?: number };
    auth: string | undefined;
  }> = [];
  const server = createServer((request, response) => {
    let raw = '';
    request.on('data', (part: Buffer) => (raw += part.toString()));
    request.on('end', () => {
      const body = JSON.parse(raw) as { input: string[]; model: string };
      requests.push({ path: request.url ?? '', body, auth: request.headers.authorization });
      const answer = reply(body);
      if (answer.hang) return;
      response.writeHead(answer.status, { 'content-type': 'application/json' });
      response.end(JSON.stringify(answer.body));
    });
  });
  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const vectors = (input: string[], dims = 3) => ({
    object: 'list',
    model: 'm',
    data: input
      .map((text, index) => ({
        object: 'embedding',
        index,
        embedding: Array.from({ length: dims }, (_, d) => text.length + d),
      }))
      .reverse(),
  });

  it('openai embedder - posts to /embeddings and returns unit vectors in input order, batched', async () => {
    reply = ({ input }) => ({ status: 200, body: vectors(input) });
    const embedder = new OpenAiEmbedder({
      baseURL,
      apiKey: 'secret',
      model: 'text-embedding-3-small',
      dimensions: 3,
      batchSize: 2,
    });
    const out = await embedder.embed(['a', 'bb', 'ccc'], never);
    expect(out).toHaveLength(3);
    const expected = (n: number) => {
      const norm = Math.hypot(n, n + 1, n + 2);
      return [n / norm, (n + 1) / norm, (n + 2) / norm];
    };
    out.forEach((vector, i) =>
      [...vector].forEach((value, d) => expect(value).toBeCloseTo(expected(i + 1)[d] as number, 5)),
    );
    expect(requests.slice(-2).map((r) => r.body.input)).toEqual([['a', 'bb'], ['ccc']]);
    expect(requests.at(-1)).toMatchObject({
      path: '/v1/embeddings',
      auth: 'Bearer secret',
      body: { model: 'text-embedding-3-small' },
    });
    expect(requests.at(-1)?.body.dimensions).toBeUndefined();
  });

  it('openai embedder - asks for shortened vectors only when told to', async () => {
    reply = ({ input }) => ({ status: 200, body: vectors(input) });
    await new OpenAiEmbedder({ baseURL, model: 'm', dimensions: 3, requestDimensions: true }).embed(['a'], never);
    expect(requests.at(-1)?.body.dimensions).toBe(3);
  });

  it('openai embedder - a vector of the wrong length is refused', async () => {
    reply = ({ input }) => ({ status: 200, body: vectors(input, 5) });
    await expect(new OpenAiEmbedder({ baseURL, model: 'm', dimensions: 3 }).embed(['a'], never)).rejects.toThrow(
      /returned 5 dimensions, configured for 3/,
    );
  });

  it('openai embedder - server errors are UnavailableError, rate limits resource_exhausted, bad requests ValidationError', async () => {
    const embedder = new OpenAiEmbedder({ baseURL, model: 'm', dimensions: 3 });
    reply = () => ({ status: 500, body: { error: { message: 'boom' } } });
    await expect(embedder.embed(['a'], never)).rejects.toBeInstanceOf(UnavailableError);
    reply = () => ({ status: 429, body: { error: { message: 'slow down' } } });
    await expect(embedder.embed(['a'], never)).rejects.toMatchObject({ code: 'resource_exhausted' });
    reply = () => ({ status: 400, body: { error: { message: 'input too long' } } });
    await expect(embedder.embed(['a'], never)).rejects.toBeInstanceOf(ValidationError);
  });

  it('openai embedder - only a refusal of what the texts hold is a ValidationError: a timeout or a missing model is retried', async () => {
    const embedder = new OpenAiEmbedder({ baseURL, model: 'm', dimensions: 3 });
    for (const status of [413, 422]) {
      reply = () => ({ status, body: { error: { message: 'input too long' } } });
      await expect(embedder.embed(['a'], never)).rejects.toBeInstanceOf(ValidationError);
    }
    reply = () => ({ status: 408, body: { error: { message: 'request timeout' } } });
    await expect(embedder.embed(['a'], never)).rejects.toMatchObject({ code: 'deadline_exceeded', retryable: true });
    for (const status of [404, 409]) {
      reply = () => ({ status, body: { error: { message: 'model not found' } } });
      await expect(embedder.embed(['a'], never)).rejects.toMatchObject({ code: 'unavailable', retryable: true });
    }
  });

  it('openai embedder - a malformed body or a missing vector is UnavailableError', async () => {
    const embedder = new OpenAiEmbedder({ baseURL, model: 'm', dimensions: 3 });
    reply = () => ({ status: 200, body: { data: 'nope' } });
    await expect(embedder.embed(['a'], never)).rejects.toThrow(/unexpected body/);
    reply = ({ input }) => ({ status: 200, body: vectors(input.slice(1)) });
    await expect(embedder.embed(['a', 'b'], never)).rejects.toThrow(/no vector for text 1/);
  });

  it('openai embedder - an unreachable server is UnavailableError', async () => {
    await expect(
      new OpenAiEmbedder({ baseURL: 'http://127.0.0.1:1/v1', model: 'm', dimensions: 3 }).embed(['a'], never),
    ).rejects.toBeInstanceOf(UnavailableError);
  });

  it('openai embedder - aborting ends the call with the abort reason', async () => {
    reply = () => ({ status: 200, body: {}, hang: true });
    const embedder = new OpenAiEmbedder({ baseURL, model: 'm', dimensions: 3 });
    const controller = new AbortController();
    const pending = embedder.embed(['a'], controller.signal);
    controller.abort(new CancelledError('question cancelled'));
    await expect(pending).rejects.toThrow('question cancelled');
  });

  it('openai embedder - rejects a non-positive dimension count', () => {
    expect(() => new OpenAiEmbedder({ baseURL, model: 'm', dimensions: 0 })).toThrow(ValidationError);
  });
});
