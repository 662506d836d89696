import { describe, expect, it } from 'vitest';
import { RETRIEVE_QUERY_MAX_CHARS } from '@hopline/contracts';
import { configSchema } from '../src/config.js';
import { askJson, bearer, startTestGateway } from './support/harness.js';

async function expectProblem(response: Response, status: number, slug: string): Promise<Record<string, unknown>> {
  expect(response.status).toBe(status);
  expect(response.headers.get('content-type')).toBe('application/problem+json');
  const problem = (await response.json()) as Record<string, unknown>;
  expect(problem).toMatchObject({ type: `urn:hopline:problem:${slug}`, status });
  expect(typeof problem.title).toBe('string');
  return problem;
}

describe('answer-gateway errors are problem+json with a stable type', () => {
  it('401 for a missing key, a non-bearer header and an unknown key', async () => {
    await using t = await startTestGateway();
    const missing = await askJson(t.baseUrl, undefined, { question: 'Who owns Atlas?' });
    await expectProblem(missing, 401, 'unauthenticated');
    expect(missing.headers.get('www-authenticate')).toBe('Bearer');
    await expectProblem(
      await askJson(t.baseUrl, undefined, { question: 'q' }, { Authorization: `Basic ${btoa('a:b')}` }),
      401,
      'unauthenticated',
    );
    const unknown = await askJson(
      t.baseUrl,
      undefined,
      { question: 'Who owns Atlas?' },
      { Authorization: 'Bearer hl_not-a-key' },
    );
    expect((await expectProblem(unknown, 401, 'unauthenticated')).detail).toBe('the API key is not known');
    expect(t.reasoner.asks).toHaveLength(0);
  });

  it('MAX_QUESTION_CHARS cannot be set past the query a retrieval-worker accepts, which the question is sent as', () => {
    const limit = configSchema.shape.MAX_QUESTION_CHARS;
    expect(limit.safeParse(String(RETRIEVE_QUERY_MAX_CHARS)).success).toBe(true);
    expect(limit.safeParse(String(RETRIEVE_QUERY_MAX_CHARS + 1)).success).toBe(false);
  });

  it('400 for an empty, blank or oversized question, naming the field', async () => {
    await using t = await startTestGateway({ config: { MAX_QUESTION_CHARS: 50 } });
    for (const question of ['', '   \n ']) {
      const problem = await expectProblem(await askJson(t.baseUrl, t.keys.alice, { question }), 400, 'invalid-request');
      expect(problem.detail).toContain('question is empty');
    }
    const long = await expectProblem(
      await askJson(t.baseUrl, t.keys.alice, { question: 'x'.repeat(51) }),
      400,
      'invalid-request',
    );
    expect(long.detail).toContain('longer than 50 characters');
    // Characters, not UTF-16 units: 50 emoji are 50 characters.
    const emoji = await askJson(t.baseUrl, t.keys.alice, { question: '🔥'.repeat(50) });
    expect(emoji.status).toBe(200);
    await emoji.text();
    await expectProblem(await askJson(t.baseUrl, t.keys.alice, { question: 42 }), 400, 'invalid-request');
    await expectProblem(await askJson(t.baseUrl, t.keys.alice, {}), 400, 'invalid-request');
    expect(t.reasoner.asks).toHaveLength(1);
  });

  it('400 for malformed JSON, an empty body and a body that is not an object', async () => {
    await using t = await startTestGateway();
    await expectProblem(await askJson(t.baseUrl, t.keys.alice, '{"question": "Who'), 400, 'malformed-json');
    await expectProblem(await askJson(t.baseUrl, t.keys.alice, ''), 400, 'malformed-json');
    await expectProblem(await askJson(t.baseUrl, t.keys.alice, '["Who owns Atlas?"]'), 400, 'invalid-request');
  });

  it('400 for unknown fields, so that a typo does not pass silently', async () => {
    await using t = await startTestGateway();
    const problem = await expectProblem(
      await askJson(t.baseUrl, t.keys.alice, { question: 'Who owns Atlas?', maxhops: 2 }),
      400,
      'invalid-request',
    );
    expect(problem.detail).toMatch(/maxhops/);
  });

  it('400 for a hop budget outside 1..5 and for malformed kb ids', async () => {
    await using t = await startTestGateway();
    await expectProblem(
      await askJson(t.baseUrl, t.keys.alice, { question: 'Who owns Atlas?', maxHops: 6 }),
      400,
      'invalid-request',
    );
    await expectProblem(
      await askJson(t.baseUrl, t.keys.alice, { question: 'Who owns Atlas?', maxHops: 1.5 }),
      400,
      'invalid-request',
    );
    await expectProblem(
      await askJson(t.baseUrl, t.keys.alice, { question: 'Who owns Atlas?', kbIds: [] }),
      400,
      'invalid-request',
    );
  });

  it('403 for a kb outside the key scope, unknown or another tenant’s alike', async () => {
    await using t = await startTestGateway();
    const unknownKb = await expectProblem(
      await askJson(t.baseUrl, t.keys.bob, { question: 'Who owns Atlas?', kbIds: ['projects'] }),
      403,
      'forbidden',
    );
    expect(unknownKb.detail).toContain('"projects"');
    await expectProblem(
      await askJson(t.baseUrl, t.keys.alice, { question: 'Who owns Atlas?', kbIds: ['handbook', 'no-such-kb'] }),
      403,
      'forbidden',
    );
    expect(t.reasoner.asks).toHaveLength(0);
  });

  it('413 for a body over the size limit, declared or streamed', async () => {
    await using t = await startTestGateway({ config: { MAX_BODY_BYTES: 1_000 } });
    await expectProblem(
      await askJson(t.baseUrl, t.keys.alice, { question: 'x'.repeat(2_000) }),
      413,
      'payload-too-large',
    );
    const chunked = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode(`{"question": "${'y'.repeat(800)}`));
        controller.enqueue(new TextEncoder().encode(`${'y'.repeat(800)}"}`));
        controller.close();
      },
    });
    const response = await fetch(`${t.baseUrl}/v1/ask`, {
      method: 'POST',
      headers: { ...bearer(t.keys.alice), 'Content-Type': 'application/json' },
      body: chunked,
      duplex: 'half',
    } as RequestInit);
    await expectProblem(response, 413, 'payload-too-large');
  });

  it('415 for a body that is not JSON', async () => {
    await using t = await startTestGateway();
    await expectProblem(
      await askJson(t.baseUrl, t.keys.alice, 'question=Who', { 'Content-Type': 'application/x-www-form-urlencoded' }),
      415,
      'unsupported-media-type',
    );
  });

  it('404 for an unknown route and 405 with Allow for a wrong method', async () => {
    await using t = await startTestGateway();
    await expectProblem(await fetch(`${t.baseUrl}/v2/ask`), 404, 'not-found');
    const wrongMethod = await fetch(`${t.baseUrl}/v1/ask`, { headers: bearer(t.keys.alice) });
    await expectProblem(wrongMethod, 405, 'method-not-allowed');
    expect(wrongMethod.headers.get('allow')).toBe('POST');
    await expectProblem(
      await fetch(`${t.baseUrl}/v1/questions/%E0%A4%A/trace`, { headers: bearer(t.keys.alice) }),
      404,
      'not-found',
    );
  });

  it('keeps answering after a burst of bad requests: nothing crashes', async () => {
    await using t = await startTestGateway();
    const bad = await Promise.all([
      askJson(t.baseUrl, undefined, { question: 'q' }),
      askJson(t.baseUrl, t.keys.alice, '{'),
      askJson(t.baseUrl, t.keys.alice, { question: 'q', extra: true }),
      askJson(t.baseUrl, t.keys.alice, 'null'),
      askJson(t.baseUrl, t.keys.alice, '"just a string"'),
      askJson(
        t.baseUrl,
        t.keys.alice,
        { question: '\u0000\uffff' },
        { 'Content-Type': 'application/json; charset=utf-8' },
      ),
    ]);
    expect(bad.map((response) => response.status)).toEqual([401, 400, 400, 400, 400, 200]);
    const good = await askJson(t.baseUrl, t.keys.alice, { question: 'Who owns Atlas?' });
    expect(good.status).toBe(200);
  });
});
