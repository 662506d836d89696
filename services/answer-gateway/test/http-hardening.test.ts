import { connect } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { createMemoryBroker, type Bus, type DurableStream } from '@hopline/bus';
import { askJson, bearer, startGatewayOn, startTestGateway, testKeys, type TestGateway } from './support/harness.js';

/** The bus, with every publish to its default stream (ingestion) taking `publishMs` first. */
function slowIngestBus(bus: Bus, publishMs: number): Bus {
  return Object.assign(Object.create(bus) as Bus, {
    async durableStream(...args: Parameters<Bus['durableStream']>) {
      const stream = await bus.durableStream(...args);
      if (args.length > 0) return stream;
      return Object.assign(Object.create(stream) as DurableStream, {
        async publish(...publish: Parameters<DurableStream['publish']>) {
          await delay(publishMs);
          return stream.publish(...publish);
        },
      });
    },
  });
}

/** Sends raw bytes to the gateway and reads what comes back until the server closes (or `endAfterMs`). */
function raw(t: TestGateway, request: string | Buffer, options: { end?: boolean } = {}): Promise<string> {
  const { port, hostname } = new URL(t.baseUrl);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => {
      socket.write(request);
      if (options.end) socket.end();
    });
    const parts: Buffer[] = [];
    socket.on('data', (part: Buffer) => parts.push(part));
    socket.on('error', (error: NodeJS.ErrnoException) =>
      // A reset after the answer was read still delivered the answer.
      parts.length > 0 ? resolve(Buffer.concat(parts).toString('utf8')) : reject(error),
    );
    socket.on('close', () => resolve(Buffer.concat(parts).toString('utf8')));
  });
}

/** The status and the problem document of a raw response. */
function parseRaw(response: string): {
  status: number;
  contentType: string | undefined;
  problem: Record<string, unknown>;
} {
  const [head = '', body = ''] = response.split('\r\n\r\n');
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1]);
  const contentType = /\r\ncontent-type: ([^\r\n]+)/i.exec(head)?.[1];
  return { status, contentType, problem: JSON.parse(body) as Record<string, unknown> };
}

describe('answer-gateway HTTP hardening', () => {
  it("answers what Node's parser refuses as problem+json: headers too large, malformed requests", async () => {
    await using t = await startTestGateway();
    const cases: Array<[string, number, string]> = [
      [`GET / HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`, 431, 'headers-too-large'],
      ['GARBAGE\r\n\r\n', 400, 'bad-request'],
      ['POST /v1/ask HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n', 400, 'bad-request'],
      ['GET /v1/é HTTP/1.1\r\nHost: x\r\n\r\n', 400, 'bad-request'],
    ];
    for (const [request, status, slug] of cases) {
      const response = parseRaw(await raw(t, Buffer.from(request, 'utf8')));
      expect({ request: request.slice(0, 30), status: response.status, contentType: response.contentType }).toEqual({
        request: request.slice(0, 30),
        status,
        contentType: 'application/problem+json',
      });
      expect(response.problem).toMatchObject({ type: `urn:hopline:problem:${slug}`, status });
    }
    // The gateway keeps serving.
    expect((await fetch(`${t.baseUrl}/`)).status).toBe(200);
  });

  it('a half-sent body gets 408 and its connection closes at the request timeout', async () => {
    await using t = await startTestGateway({ config: { HTTP_REQUEST_TIMEOUT_MS: 300, HTTP_HEADERS_TIMEOUT_MS: 300 } });
    const request =
      `POST /v1/ask HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${t.keys.alice.key}\r\n` +
      'Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"question":';
    const response = parseRaw(await raw(t, request));
    expect(response.status).toBe(408);
    expect(response.problem).toMatchObject({ type: 'urn:hopline:problem:request-timeout' });
    expect(t.reasoner.asks).toHaveLength(0);
  });

  it('a streamed upload the gateway itself reads slowly is not cut at the request timeout: only a body that stops coming is', async () => {
    const broker = createMemoryBroker();
    const keys = testKeys();
    const { gateway, baseUrl } = await startGatewayOn(slowIngestBus(broker.connect(), 400), keys, {
      config: { HTTP_HEADERS_TIMEOUT_MS: 500, HTTP_REQUEST_TIMEOUT_MS: 1_000 },
    });
    try {
      const text = 'x'.repeat(20_000);
      const lines = Array.from({ length: 200 }, (_, i) => JSON.stringify({ docId: `d${i}`, text }));
      const startedAt = Date.now();
      const response = await fetch(`${baseUrl}/v1/kbs/projects/documents`, {
        method: 'POST',
        headers: { ...bearer(keys.alice), 'Content-Type': 'application/x-ndjson' },
        body: `${lines.join('\n')}\n`,
      });
      expect(response.status).toBe(202);
      expect(((await response.json()) as { accepted: unknown[] }).accepted).toHaveLength(200);
      // It took longer than the request timeout, the gateway holding the body back meanwhile.
      expect(Date.now() - startedAt).toBeGreaterThan(1_000);
    } finally {
      await gateway.stop({ graceMs: 0 });
    }
  }, 60_000);

  it('accepts only application/json, with no parameter but charset=utf-8', async () => {
    await using t = await startTestGateway();
    const body = { question: 'Who owns Atlas?' };
    for (const contentType of [
      'application/json',
      'application/json; charset=utf-8',
      'Application/JSON;charset="UTF-8"',
    ]) {
      const response = await askJson(t.baseUrl, t.keys.alice, body, { 'Content-Type': contentType });
      expect({ contentType, status: response.status }).toEqual({ contentType, status: 200 });
    }
    for (const contentType of [
      'application/json-patch+json',
      'application/json; charset=latin1',
      'application/json; charset=utf-16',
      'application/json; boundary=x',
      'application/jsonx',
    ]) {
      const response = await askJson(t.baseUrl, t.keys.alice, body, { 'Content-Type': contentType });
      expect({ contentType, status: response.status }).toEqual({ contentType, status: 415 });
      expect(response.headers.get('content-type')).toBe('application/problem+json');
    }
  });

  it('accepts NDJSON documents only in UTF-8, as JSON ones', async () => {
    await using t = await startTestGateway();
    const line = Buffer.from('{"docId":"cafe","text":"Caf\u00e9 Atlas"}\n', 'latin1');
    const post = (contentType: string) =>
      fetch(`${t.baseUrl}/v1/kbs/projects/documents`, {
        method: 'POST',
        headers: { ...bearer(t.keys.alice), 'Content-Type': contentType },
        body: line,
      });
    for (const contentType of ['application/x-ndjson; charset=iso-8859-1', 'application/json; charset=iso-8859-1']) {
      const response = await post(contentType);
      expect({ contentType, status: response.status }).toEqual({ contentType, status: 415 });
      expect(response.headers.get('content-type')).toBe('application/problem+json');
    }
    expect((await post('application/x-ndjson; charset=utf-8')).status).toBe(202);
  });

  it('an empty body declared as JSON is no body on a route that takes none (PUT of a kb), and malformed JSON on one that does', async () => {
    await using t = await startTestGateway();
    const headers = { ...bearer(t.keys.bob), 'Content-Type': 'application/json' };
    // Bob may read the kb but not manage it: refused by the route, after the body.
    expect((await fetch(`${t.baseUrl}/v1/kbs/handbook`, { method: 'PUT', headers })).status).toBe(403);
    expect((await fetch(`${t.baseUrl}/v1/kbs/handbook`, { method: 'DELETE', headers })).status).toBe(403);
    const ask = await fetch(`${t.baseUrl}/v1/ask`, { method: 'POST', headers });
    expect(ask.status).toBe(400);
    expect(await ask.json()).toMatchObject({ type: 'urn:hopline:problem:malformed-json' });
    // Ingestion takes a body too, though its schema documents it per media type.
    const ingest = await fetch(`${t.baseUrl}/v1/kbs/projects/documents`, {
      method: 'POST',
      headers: { ...bearer(t.keys.alice), 'Content-Type': 'application/json' },
    });
    expect(ingest.status).toBe(400);
    expect(await ingest.json()).toMatchObject({ type: 'urn:hopline:problem:malformed-json' });
  });

  it('reads Last-Event-ID as decimal digits only', async () => {
    await using t = await startTestGateway();
    const response = await askJson(t.baseUrl, t.keys.alice, { question: 'Who owns Atlas?' });
    const questionId = response.headers.get('hopline-question-id') ?? '';
    // (Spaces around a header value are HTTP's optional white space, not part of the value.)
    for (const lastEventId of ['0x10', '1e1', '+1', '-1', '1.0', '1_0']) {
      const resumed = await fetch(`${t.baseUrl}/v1/questions/${questionId}/events`, {
        headers: { ...bearer(t.keys.alice), 'Last-Event-ID': lastEventId },
      });
      expect({ lastEventId, status: resumed.status }).toEqual({ lastEventId, status: 400 });
      expect(await resumed.json()).toMatchObject({ type: 'urn:hopline:problem:invalid-request' });
    }
  });

  it('refuses a question of only invisible characters', async () => {
    await using t = await startTestGateway();
    for (const question of ['\u200B\u200C\u200D', '\uFEFF \u2060', '\u3164\u115F', '\u0301', '\u2800\u202E']) {
      const response = await askJson(t.baseUrl, t.keys.alice, { question });
      expect({ question, status: response.status }).toEqual({ question, status: 400 });
      expect(((await response.json()) as { detail: string }).detail).toContain('invisible');
    }
    expect((await askJson(t.baseUrl, t.keys.alice, { question: '\u200BWho owns Atlas?' })).status).toBe(200);
    expect(t.reasoner.asks).toHaveLength(1);
  });

  it('a long id in the path is a client error, never a 500: too long for any id is 400, a long unknown one 404', async () => {
    await using t = await startTestGateway();
    const get = (path: string) => fetch(`${t.baseUrl}${path}`, { headers: bearer(t.keys.alice) });
    const tooLong = await get(`/v1/questions/${'x'.repeat(2_000)}/events`);
    expect(tooLong.status).toBe(400);
    expect(tooLong.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    // Longer than fastify's default 100 characters: a document id from a long file name is this long.
    expect((await get(`/v1/questions/${'x'.repeat(300)}/events`)).status).toBe(404);
    expect((await get(`/v1/kbs/${'x'.repeat(200)}`)).status).toBeLessThan(500);
  });
});
