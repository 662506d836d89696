import { connect, type Socket } from 'node:net';
import * as grpc from '@grpc/grpc-js';
import {
  codecs,
  loadHoplineGrpc,
  subjects,
  type IngestCommand__Output,
  type QaEvent__Output,
} from '@hopline/contracts';
import { waitFor } from '@hopline/test-support';
import { describe, expect, it } from 'vitest';
import { twoHopScript } from './support/fake-reasoner.js';
import { askJson, askSse, bearer, startTestGateway, type TestGateway, type TestKey } from './support/harness.js';

describe('answer-gateway graceful shutdown', () => {
  it('refuses new questions but lets running ones finish within the grace period', async () => {
    await using t = await startTestGateway({ script: twoHopScript({ gated: true }) });
    const running = await askSse(t.baseUrl, t.keys.alice, { question: 'Who owns Atlas?' });
    await waitFor(() => running.events.length >= 1);
    const stopped = t.gateway.stop({ graceMs: 10_000 });
    expect(t.gateway.health().ok).toBe(false);

    const refused = await askJson(t.baseUrl, t.keys.bob, { question: 'Who owns Atlas?' }).catch(
      (error: unknown) => error,
    );
    // Either the listener is already closed, or the request reached a kept-alive connection and was refused.
    if (refused instanceof Response) {
      expect(refused.status).toBe(503);
      expect(await refused.json()).toMatchObject({ type: 'urn:hopline:problem:shutting-down' });
    } else {
      expect(refused).toBeInstanceOf(TypeError);
    }

    await waitFor(() => {
      t.reasoner.releaseAll();
      return running.events.at(-1)?.name === 'done';
    });
    await stopped;
    await running.ended;
    expect(running.events.filter((event) => event.name === 'error')).toHaveLength(0);
    expect(t.reasoner.asks).toHaveLength(1);
  });

  it('ends questions still running after the grace period with a retryable error event on both transports, and cancels them downstream', async () => {
    await using t = await startTestGateway({ script: twoHopScript({ gated: true }) });
    const sse = await askSse(t.baseUrl, t.keys.alice, { question: 'Who owns Atlas?' });
    const { AnswerGateway } = loadHoplineGrpc().hopline.v1;
    const client = new AnswerGateway(t.grpcAddress, grpc.credentials.createInsecure());
    const metadata = new grpc.Metadata();
    metadata.set('authorization', `Bearer ${t.keys.carol.key}`);
    const call = client.ask({ question: 'Who owns Atlas?' }, metadata);
    const grpcEvents: QaEvent__Output[] = [];
    call.on('data', (event: QaEvent__Output) => grpcEvents.push(event));
    const grpcStatus = new Promise<grpc.StatusObject>((resolve) => call.on('status', resolve));
    call.on('error', () => {});
    await waitFor(() => sse.events.length >= 1 && grpcEvents.length >= 1);

    await t.gateway.stop({ graceMs: 50 });
    await sse.ended;
    expect(sse.events.at(-1)).toMatchObject({ name: 'error', data: { code: 'unavailable', retryable: true } });
    expect(sse.events.filter((event) => event.name === 'error' || event.name === 'done')).toHaveLength(1);
    expect((await grpcStatus).code).toBe(grpc.status.OK);
    expect(grpcEvents.at(-1)?.error).toMatchObject({ code: 'unavailable', retryable: true });
    client.close();

    for (const ask of t.reasoner.asks) {
      const cancel = await waitFor(() => t.reasoner.record(ask.ctx?.questionId ?? '')?.cancel);
      expect(cancel.reason).toBe('shutdown');
    }
  });

  it.each([
    ['an invalid question', JSON.stringify({ question: '' })],
    ['malformed JSON', '{"question": "Who'],
  ])('a draining gateway answers 503 before it reads the body over HTTP: %s, as a valid one', async (_what, body) => {
    await using t = await startTestGateway({ script: twoHopScript({ gated: true }) });
    const reply = await sendWhileDraining(t, () => ({
      method: 'POST',
      path: '/v1/ask',
      headers: { ...bearer(t.keys.bob), 'Content-Type': 'application/json' },
      body,
    }));
    expect(reply).toMatch(/^HTTP\/1\.1 503 [^]*urn:hopline:problem:shutting-down/);
  });

  const document = JSON.stringify({ docId: 'guide', title: 'Guide', text: 'Dana Reyes owns project Atlas.' });
  const boundary = 'hopline-test-boundary';
  it.each<[string, RawRequest]>([
    ['creating a kb', { method: 'PUT', path: '/v1/kbs/projects', headers: {} }],
    ['deleting a kb', { method: 'DELETE', path: '/v1/kbs/projects', headers: {} }],
    [
      'a JSON upload',
      {
        method: 'POST',
        path: '/v1/kbs/projects/documents',
        headers: { 'Content-Type': 'application/json' },
        body: document,
      },
    ],
    [
      'an NDJSON upload',
      {
        method: 'POST',
        path: '/v1/kbs/projects/documents',
        headers: { 'Content-Type': 'application/x-ndjson' },
        body: `${document}\n${document.replace('guide', 'guide-2')}\n`,
      },
    ],
    [
      'a file upload',
      {
        method: 'POST',
        path: '/v1/kbs/projects/documents',
        headers: { 'Content-Type': `multipart/form-data; boundary=${boundary}` },
        body:
          `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="guide.txt"\r\n` +
          `Content-Type: text/plain\r\n\r\nDana Reyes owns project Atlas.\r\n--${boundary}--\r\n`,
      },
    ],
    [
      'an upload whose body has not arrived',
      {
        method: 'POST',
        path: '/v1/kbs/projects/documents',
        headers: { 'Content-Type': 'application/json', 'Content-Length': '1048576' },
        body: '{"docId": "guide", ',
      },
    ],
    ['deleting a document', { method: 'DELETE', path: '/v1/kbs/projects/documents/guide', headers: {} }],
  ])(
    'a draining gateway refuses a write that would start work, before it reads the body: %s',
    async (_what, request) => {
      await using t = await startTestGateway({ script: twoHopScript({ gated: true }) });
      const reply = await sendWhileDraining(t, () => ({
        ...request,
        headers: { ...bearer(t.keys.alice), ...request.headers },
      }));
      expect(reply).toMatch(/^HTTP\/1\.1 503 /);
      expect(reply).toMatch(/\r\nretry-after: 1\r\n/i);
      expect(reply).toContain('urn:hopline:problem:shutting-down');
    },
  );

  it('an upload whose body is still arriving when the drain begins is read to its end and accepted, while a new upload is refused and an idle connection closed', async () => {
    await using t = await startTestGateway();
    const upload = await rawConnection(t);
    upload.socket.write(
      ndjsonUploadHead(t.keys.alice, [ndjsonLine('first'), ndjsonLine('second')]) + ndjsonLine('first'),
    );
    await storedCommands(t, 1);
    const idle = await rawConnection(t);
    idle.socket.write('GET /openapi.json HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    await waitFor(() => idle.reply.startsWith('HTTP/1.1 200 '), { description: 'the idle connection was answered' });
    const late = await rawConnection(t);
    // The request line before the drain, so that the connection is in use and kept open.
    late.socket.write('POST /v1/kbs/projects/documents HTTP/1.1\r\n');

    const stopped = t.gateway.stop({ graceMs: 10_000 });
    const lateHead = ndjsonUploadHead(t.keys.alice, [ndjsonLine('late')]);
    late.socket.write(lateHead.slice(lateHead.indexOf('\r\n') + 2) + ndjsonLine('late'));
    await late.closed;
    expect(late.reply).toMatch(/^HTTP\/1\.1 503 [^]*urn:hopline:problem:shutting-down/);
    await idle.closed;
    // The last line comes after the second the gateway leaves finished responses to flush once
    // no question runs: what closed such an upload's connection mid-body.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    upload.socket.write(ndjsonLine('second'));
    await upload.closed;
    await stopped;

    expect(upload.reply).toMatch(/^HTTP\/1\.1 202 /);
    const { accepted } = JSON.parse(upload.reply.slice(upload.reply.indexOf('\r\n\r\n') + 4)) as {
      accepted: Array<{ docId: string }>;
    };
    expect(accepted.map((entry) => entry.docId)).toEqual(['first', 'second']);
    expect((await storedCommands(t, 2)).map((command) => command.upsert?.docId)).toEqual(['first', 'second']);
  });

  it('an upload still arriving when the grace period ends has its connection closed unanswered, the documents read before it accepted', async () => {
    await using t = await startTestGateway();
    const upload = await rawConnection(t);
    upload.socket.write(
      ndjsonUploadHead(t.keys.alice, [ndjsonLine('first'), ndjsonLine('second')]) + ndjsonLine('first'),
    );
    // The first document went in; the client is not told so.
    await storedCommands(t, 1);

    await t.gateway.stop({ graceMs: 50 });
    await upload.closed;
    expect(upload.reply).toBe('');
  });

  it.each<[string, (questionId: string) => RawRequest, RegExp]>([
    [
      "resuming the running question's events",
      (questionId) => ({
        method: 'GET',
        path: `/v1/questions/${questionId}/events`,
        headers: { Accept: 'text/event-stream', 'Last-Event-ID': '1' },
      }),
      /^HTTP\/1\.1 200 [^]*\r\nid: 2\r?\n/,
    ],
    [
      'cancelling the running question',
      (questionId) => ({ method: 'DELETE', path: `/v1/questions/${questionId}`, headers: {} }),
      /^HTTP\/1\.1 200 [^]*"cancelled":true/,
    ],
  ])('a draining gateway still serves what reads or ends work under way: %s', async (_what, request, expected) => {
    await using t = await startTestGateway({ script: twoHopScript({ gated: true }) });
    const reply = await sendWhileDraining(t, (questionId) => {
      const sent = request(questionId);
      return { ...sent, headers: { ...bearer(t.keys.alice), ...sent.headers } };
    });
    expect(reply).toMatch(expected);
  });
});

interface RawRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
}

/**
 * Sends a request to a draining gateway while a question of alice's runs, and resolves with the
 * raw response. The request line arrives before the drain begins, so its connection is in use
 * and stays open (a new connection would be refused by the closed listener); the headers and
 * body after. The question is let finish once the response has begun, so the drain lasts
 * at least until the request was answered.
 */
async function sendWhileDraining(t: TestGateway, request: (questionId: string) => RawRequest): Promise<string> {
  const running = await askSse(t.baseUrl, t.keys.alice, { question: 'Which bridge did the ferry replace?' });
  await waitFor(() => running.events.length >= 1);
  const { method, path, headers, body = '' } = request(running.response.headers.get('hopline-question-id') ?? '');
  const socket = connect(Number(new URL(t.baseUrl).port), '127.0.0.1');
  await new Promise((resolve) => socket.once('connect', resolve));
  let reply = '';
  socket.on('data', (chunk: Buffer) => (reply += chunk.toString()));
  const closed = new Promise((resolve) => socket.once('close', resolve));
  socket.write(`${method} ${path} HTTP/1.1\r\n`);

  const stopped = t.gateway.stop({ graceMs: 10_000 });
  const head = {
    Host: '127.0.0.1',
    'Content-Length': String(Buffer.byteLength(body)),
    Connection: 'close',
    ...headers,
  };
  // Not ended: a body shorter than its Content-Length is still awaited by the gateway.
  socket.write(
    `${Object.entries(head)
      .map(([name, value]) => `${name}: ${value}\r\n`)
      .join('')}\r\n${body}`,
  );
  await waitFor(() => reply.startsWith('HTTP/1.1 '), { description: 'the response began' });
  let done = false;
  void Promise.all([closed, stopped]).then(() => (done = true));
  await waitFor(
    () => {
      t.reasoner.releaseAll();
      return done;
    },
    { description: 'the response ended and the gateway stopped' },
  );
  return reply;
}

const ndjsonLine = (docId: string) => `${JSON.stringify({ docId, text: `${docId} is a document about Atlas.` })}\n`;

/** The request line and headers of an NDJSON upload to the kb `projects` whose body will be `lines`. */
function ndjsonUploadHead(key: TestKey, lines: string[]): string {
  const headers = {
    Host: '127.0.0.1',
    ...bearer(key),
    'Content-Type': 'application/x-ndjson',
    'Content-Length': String(Buffer.byteLength(lines.join(''))),
  };
  return `POST /v1/kbs/projects/documents HTTP/1.1\r\n${Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('')}\r\n`;
}

/** A connection to the gateway's HTTP port: what came back on it so far, and when it closed. */
async function rawConnection(t: TestGateway): Promise<{ socket: Socket; reply: string; closed: Promise<void> }> {
  const socket = connect(Number(new URL(t.baseUrl).port), '127.0.0.1');
  await new Promise((resolve) => socket.once('connect', resolve));
  // A connection closed under a request in flight is reset: that is what these tests look at.
  socket.on('error', () => {});
  const connection = {
    socket,
    reply: '',
    closed: new Promise<void>((resolve) => socket.once('close', () => resolve())),
  };
  socket.on('data', (chunk: Buffer) => (connection.reply += chunk.toString()));
  return connection;
}

/** The first `count` ingest commands stored for alice's kb `projects`, oldest first. */
async function storedCommands(t: TestGateway, count: number): Promise<IngestCommand__Output[]> {
  const stream = await t.bus.durableStream();
  const reading = new AbortController();
  const commands: IngestCommand__Output[] = [];
  for await (const message of stream.follow(subjects.ingest(t.keys.alice.tenantId, 'projects'), {
    signal: reading.signal,
  })) {
    commands.push(codecs.ingestCommand.decode(message.data));
    if (commands.length === count) reading.abort();
  }
  return commands;
}
