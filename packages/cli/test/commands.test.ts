// `pnpm ask`, `pnpm ingest` and `pnpm fabric:credentials` as a user runs them: real processes,
// against a stand-in gateway that speaks the documented wire format.
import { execFile, spawn } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { makeDocx, makePdf } from '@hopline/test-support';
import { afterEach, describe, expect, it } from 'vitest';

const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));

interface Run {
  status: number;
  stdout: string;
  stderr: string;
}

function run(
  command: 'ask' | 'ingest' | 'fabric-credentials',
  args: string[],
  env: Record<string, string> = {},
): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--conditions=@hopline/source', '--import', 'tsx', `packages/cli/src/${command}.ts`, ...args],
      { cwd: repoRoot, env: { ...process.env, HOPLINE_URL: '', HOPLINE_API_KEY: 'hl_test', ...env } },
      (error, stdout, stderr) => resolve({ status: error ? Number(error.code) : 0, stdout, stderr }),
    );
  });
}

/**
 * `pnpm ask` run until `after` (the stand-in gateway got the question, or the command printed
 * this text), then interrupted with Ctrl-C (SIGINT).
 */
async function interruptedAsk(url: string, after: Promise<void> | { printed: string }) {
  const child = spawn(
    process.execPath,
    ['--conditions=@hopline/source', '--import', 'tsx', 'packages/cli/src/ask.ts', '--url', url, 'Who owns Atlas?'],
    { cwd: repoRoot, env: { ...process.env, HOPLINE_URL: '', HOPLINE_API_KEY: 'hl_test' }, stdio: 'pipe' },
  );
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  await new Promise<void>((resolve) => {
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      if ('printed' in after && stdout.includes(after.printed)) resolve();
    });
    if (after instanceof Promise) void after.then(resolve);
  });
  child.kill('SIGINT');
  return { status: await exited, stdout, stderr };
}

/** One Server-Sent Event as the gateway writes it. */
const sse = (id: number, event: string, data: unknown) =>
  `id: ${id}\nevent: ${event}\ndata: ${JSON.stringify(data)}\n\n`;

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

async function listen(server: Server): Promise<string> {
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe('cli commands', () => {
  it('ingest - a path that does not exist is one line of error, no stack trace', async () => {
    const result = await run('ingest', ['/nonexistent']);
    expect(result.status).toBe(1);
    expect(result.stderr.trim().split('\n')).toEqual(['error: /nonexistent: no such file or folder']);
  });

  it('ask - --help documents --url, HOPLINE_URL and HOPLINE_API_KEY', async () => {
    const result = await run('ask', ['--help']);
    expect(result.status).toBe(0);
    for (const name of ['--url', 'HOPLINE_URL', 'HOPLINE_API_KEY', '--kb', '--max-hops', '--json'])
      expect(result.stdout).toContain(name);
    expect((await run('ingest', ['--help'])).stdout).toContain('HOPLINE_URL');
  });

  it('ask - an unknown option or no question is a usage error with status 2', async () => {
    const unknown = await run('ask', ['--bogus', 'hi']);
    expect(unknown.status).toBe(2);
    expect(unknown.stderr.split('\n')[0]).toMatch(/^error: Unknown option '--bogus'/);
    expect(unknown.stderr).toContain('usage: pnpm ask');
    expect((await run('ask', [])).status).toBe(2);
  });

  it('ask - a --max-hops that is not a whole number from 1 to 5 is a usage error, and nothing is asked', async () => {
    let asked = 0;
    const url = await listen(createServer(() => asked++));
    for (const maxHops of ['three', '0', '6', '2.5', '']) {
      const result = await run('ask', ['--url', url, `--max-hops=${maxHops}`, 'Who owns Atlas?']);
      expect(result.status).toBe(2);
      expect(result.stderr).toContain(`error: --max-hops takes a whole number from 1 to 5, not "${maxHops}"`);
      expect(result.stderr).toContain('usage: pnpm ask');
    }
    expect(asked).toBe(0);
  });

  it('ask - Ctrl-C before the gateway answers, or while it streams, says cancelled and exits 130', async () => {
    let asked!: () => void;
    const reached = new Promise<void>((resolve) => (asked = resolve));
    // Takes the question and never answers: it is still being worked on.
    const silent = await listen(createServer((request) => request.resume().on('end', asked)));
    const waiting = await interruptedAsk(silent, reached);
    expect(waiting.stderr.trim()).toBe('cancelled');
    expect(waiting.status).toBe(130);

    const streaming = await listen(
      createServer((request, response) => {
        request.resume();
        response.writeHead(200, { 'Content-Type': 'text/event-stream' });
        response.write(
          `id: 1\nevent: hop_started\ndata: ${JSON.stringify({ hop: 1, maxHops: 3, subQuestion: 'q' })}\n\n`,
        );
      }),
    );
    const midStream = await interruptedAsk(streaming, { printed: 'hop 1/3' });
    expect(midStream.stderr.trim()).toBe('cancelled');
    expect(midStream.status).toBe(130);
    for (const server of servers) server.closeAllConnections();
  });

  it('ask - a stream the gateway ends before the answer, naming no question to resume, exits 1 and says so', async () => {
    const url = await listen(
      createServer((request, response) => {
        request.resume();
        response.writeHead(200, { 'Content-Type': 'text/event-stream' });
        response.write(sse(1, 'route', { route: 'ITERATIVE', decidedBy: 'RULES' }));
        // A clean end, no done or error: the gateway shut down, or a proxy's idle timeout.
        response.end(sse(2, 'hop_started', { hop: 1, maxHops: 3, subQuestion: 'q' }));
      }),
    );
    const result = await run('ask', ['--url', url, 'Who owns Atlas?']);
    expect(result.stdout).toContain('hop 1/3');
    expect(result.status).toBe(1);
    expect(result.stderr.trim()).toBe(
      'error: the stream ended before the answer, and the gateway named no question to resume',
    );
  });

  it('ask - a stream cut short is resumed after the last event (Last-Event-ID); resumes that bring nothing give up', async () => {
    const resumes: Array<{ path: string | undefined; lastEventId: unknown; authorization: unknown }> = [];
    let answered = true;
    const url = await listen(
      createServer((request, response) => {
        request.resume();
        response.writeHead(200, { 'Content-Type': 'text/event-stream', 'Hopline-Question-Id': 'q-1' });
        if (request.method === 'POST') {
          response.write(sse(1, 'route', { route: 'ITERATIVE', decidedBy: 'RULES' }));
          response.end(sse(2, 'hop_started', { hop: 1, maxHops: 3, subQuestion: 'q' }));
          return;
        }
        const { url: path, headers } = request;
        resumes.push({ path, lastEventId: headers['last-event-id'], authorization: headers.authorization });
        response.end(answered ? sse(3, 'done', { questionId: 'q-1', answer: 'Mira Chen owns it.' }) : '');
      }),
    );
    const result = await run('ask', ['--url', url, 'Who owns Atlas?']);
    expect(result.status).toBe(0);
    expect(result.stdout).toContain('hop 1/3');
    expect(result.stdout.split('Mira Chen owns it.')).toHaveLength(2);
    expect(resumes).toEqual([{ path: '/v1/questions/q-1/events', lastEventId: '2', authorization: 'Bearer hl_test' }]);

    answered = false;
    resumes.length = 0;
    const givenUp = await run('ask', ['--url', url, 'Who owns Atlas?']);
    expect(givenUp.status).toBe(1);
    expect(givenUp.stderr.trim()).toBe(
      'error: the stream ended before the answer 3 times without a new event (question q-1)',
    );
    expect(resumes.map((resume) => resume.lastEventId)).toEqual(['2', '2', '2']);
  });

  it('ask - a connection reset mid-stream is resumed like a stream cut short: each event printed once, in order, then the answer', async () => {
    const lastEventIds: unknown[] = [];
    const url = await listen(
      createServer((request, response) => {
        request.resume();
        // As a gateway killed mid-stream, or a proxy dropping the connection: reset after what was written.
        const resetAfter = (written: string) => {
          response.writeHead(200, { 'Content-Type': 'text/event-stream', 'Hopline-Question-Id': 'q-1' });
          response.write(written, () => response.socket?.destroy());
        };
        if (request.method === 'POST') {
          resetAfter(sse(1, 'route', { seq: 1 }) + sse(2, 'hop_started', { seq: 2 }));
          return;
        }
        lastEventIds.push(request.headers['last-event-id']);
        if (lastEventIds.length === 1) {
          // The gateway still away: the connection closes before any answer.
          request.socket.destroy();
          return;
        }
        if (lastEventIds.length === 2) {
          // Cut in the middle of event 4, which the next resume sends whole.
          resetAfter(`${sse(3, 'retrieval', { seq: 3 })}id: 4\nevent: hop_answer\ndata: {"se`);
          return;
        }
        response.writeHead(200, { 'Content-Type': 'text/event-stream' });
        response.end(sse(4, 'hop_answer', { seq: 4 }) + sse(5, 'done', { seq: 5, answer: 'Mira Chen owns it.' }));
      }),
    );
    const result = await run('ask', ['--url', url, '--json', 'Who owns Atlas?']);
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    const printed = result.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { event: string; data: { seq: number } });
    expect(printed.map((line) => `${line.data.seq} ${line.event}`)).toEqual([
      '1 route',
      '2 hop_started',
      '3 retrieval',
      '4 hop_answer',
      '5 done',
    ]);
    expect(lastEventIds).toEqual(['2', '2', '3']);
  });

  it('ask - resumes that cannot reach the gateway give up after 3 with the reason; Ctrl-C while waiting to resume is cancelled; a failed ask is not sent again', async () => {
    let requests = 0;
    let resumed = () => {};
    const url = await listen(
      createServer((request, response) => {
        request.resume();
        requests += 1;
        if (request.method === 'POST') {
          response.writeHead(200, { 'Content-Type': 'text/event-stream', 'Hopline-Question-Id': 'q-1' });
          response.write(sse(1, 'route', { seq: 1 }), () => response.socket?.destroy());
          return;
        }
        resumed();
        // No gateway behind the proxy, then no connection at all.
        if (requests === 2) {
          response.writeHead(502, { 'Content-Type': 'text/plain' });
          response.end('Bad Gateway');
        } else request.socket.destroy();
      }),
    );
    const givenUp = await run('ask', ['--url', url, 'Who owns Atlas?']);
    expect(givenUp.status).toBe(1);
    expect(givenUp.stderr.trim()).toBe(
      `error: the stream ended before the answer 3 times without a new event (question q-1); the last time: cannot reach the gateway at ${url}: other side closed`,
    );
    expect(requests).toBe(4);

    const waiting = await interruptedAsk(url, new Promise<void>((resolve) => (resumed = resolve)));
    expect(waiting.stderr.trim()).toBe('cancelled');
    expect(waiting.status).toBe(130);

    const hungUp = await listen(createServer((request) => ((requests += 1), request.socket.destroy())));
    requests = 0;
    const notAsked = await run('ask', ['--url', hungUp, 'Who owns Atlas?']);
    expect(notAsked.status).toBe(1);
    expect(notAsked.stderr.trim()).toBe(`error: cannot reach the gateway at ${hungUp}: other side closed`);
    expect(requests).toBe(1);
  });

  it('ask - a gateway that cannot be reached at HOPLINE_URL is named in one line', async () => {
    const closed = createServer();
    const url = await listen(closed);
    await new Promise((resolve) => closed.close(resolve));
    servers.splice(servers.indexOf(closed), 1);
    const result = await run('ask', ['Who owns Atlas?'], { HOPLINE_URL: url });
    expect(result.status).toBe(1);
    expect(result.stderr.trim().split('\n')).toEqual([
      expect.stringMatching(`^error: cannot reach the gateway at ${url}: .*ECONNREFUSED`),
    ]);
  });

  it('ask - a refusal prints the problem title and detail, not a body dump', async () => {
    const url = await listen(
      createServer((_request, response) => {
        response.writeHead(403, { 'Content-Type': 'application/problem+json' });
        response.end(
          JSON.stringify({
            type: 'urn:hopline:problem:forbidden',
            title: "Outside the API key's scope",
            status: 403,
            detail: 'kb "x" is not in scope',
          }),
        );
      }),
    );
    const result = await run('ask', ['--url', url, '--kb', 'x', 'Who owns Atlas?']);
    expect(result.status).toBe(1);
    expect(result.stderr.trim()).toBe(`error: 403 Outside the API key's scope: kb "x" is not in scope`);
  });

  it('ask - a cached answer (one done event, no tokens) is printed and marked cached', async () => {
    const asked: Array<{ authorization: string | undefined; body: string }> = [];
    const url = await listen(
      createServer((request, response) => {
        let body = '';
        request.on('data', (chunk: Buffer) => (body += chunk.toString()));
        request.on('end', () => {
          asked.push({ authorization: request.headers.authorization, body });
          response.writeHead(200, { 'Content-Type': 'text/event-stream' });
          const done = {
            questionId: 'q-cached',
            seq: 1,
            answer: 'Platform Engineering [1].',
            citations: [{ index: 1, title: 'Mira Chen', docId: 'mira-chen', hop: 2, bridgeEntity: 'Mira Chen' }],
            stopReason: 'SUFFICIENT',
            hops: 2,
            timings: { totalMs: 228 },
            cached: true,
          };
          response.end(`id: 1\nevent: done\ndata: ${JSON.stringify(done)}\n\n`);
        });
      }),
    );
    const result = await run('ask', ['Which department does the owner of Project Atlas belong to?'], {
      HOPLINE_URL: url,
    });
    expect(result.status).toBe(0);
    expect(result.stdout).toContain('Platform Engineering [1].');
    expect(result.stdout).toMatch(/^cached/m);
    expect(result.stdout).toContain('· cached · question q-cached');
    expect(asked).toEqual([expect.objectContaining({ authorization: 'Bearer hl_test' })]);
  });

  it('ask and ingest - a gateway URL with a path (behind a proxy at /hopline) keeps its path', async () => {
    const paths: string[] = [];
    const url = await listen(
      createServer((request, response) => {
        paths.push(`${request.method} ${request.url}`);
        request.resume();
        request.on('end', () => {
          if (request.url?.endsWith('/v1/ask')) {
            response.writeHead(200, { 'Content-Type': 'text/event-stream' });
            response.end(`id: 1\nevent: done\ndata: ${JSON.stringify({ questionId: 'q', answer: 'x' })}\n\n`);
          } else {
            response.writeHead(202, { 'Content-Type': 'application/json' });
            response.end(JSON.stringify({ accepted: [{ docId: 'atlas', duplicate: false }] }));
          }
        });
      }),
    );
    const asked = await run('ask', ['Who owns Atlas?'], { HOPLINE_URL: `${url}/hopline/` });
    expect(asked.status).toBe(0);
    const folder = mkdtempSync(join(tmpdir(), 'hopline-ingest-'));
    writeFileSync(join(folder, 'atlas.md'), '# Project Atlas\n\nOwned by Mira Chen.');
    try {
      const ingested = await run('ingest', ['.', '--kb', 'handbook', '--url', `${url}/hopline`, '--wait', '0'], {
        INIT_CWD: folder,
      });
      expect(ingested.status).toBe(0);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
    // Besides, ingest may poll GET /hopline/v1/kbs for the workers' lag.
    expect(paths.filter((path) => path.startsWith('POST '))).toEqual([
      'POST /hopline/v1/ask',
      'POST /hopline/v1/kbs/handbook/documents',
    ]);
    expect(paths.every((path) => path.includes(' /hopline/v1/'))).toBe(true);
  });

  it('ingest - a relative path means the folder pnpm was run in (INIT_CWD), not the repository root', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'hopline-ingest-'));
    mkdirSync(join(folder, 'notes'));
    writeFileSync(join(folder, 'notes', 'atlas.md'), '# Project Atlas\n\nOwned by Mira Chen.');
    const gateway = await standInGateway();
    try {
      const result = await run('ingest', ['notes', '--kb', 'handbook', '--url', gateway.url], { INIT_CWD: folder });
      expect(result.stderr).toBe('');
      expect(result.stdout).toContain('queued 1 documents for kb "handbook"');
      expect(gateway.posted).toEqual([
        expect.objectContaining({
          path: '/v1/kbs/handbook/documents',
          contentType: 'application/x-ndjson',
          docIds: ['atlas'],
        }),
      ]);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it('ingest - several paths (a shell glob: pnpm ingest docs/*.md) all go in, in one run', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'hopline-ingest-'));
    mkdirSync(join(folder, 'docs'));
    mkdirSync(join(folder, 'more'));
    writeFileSync(join(folder, 'docs', 'one.md'), '# One\n\nAlpha.');
    writeFileSync(join(folder, 'docs', 'two.md'), '# Two\n\nBeta.');
    writeFileSync(join(folder, 'more', 'three.txt'), 'Gamma.');
    writeFileSync(join(folder, 'more', 'one.txt'), 'Alpha again.');
    const gateway = await standInGateway();
    try {
      const paths = ['docs/one.md', 'docs/two.md', 'more'];
      // more/one.txt would give the id of docs/one.md: refused, as within one folder, before anything is sent.
      const clashing = await run('ingest', [...paths, '--url', gateway.url, '--wait', '0'], { INIT_CWD: folder });
      expect(clashing.status).toBe(1);
      expect(clashing.stderr.trim()).toBe('error: document id "one" comes from both one.md and one.txt: rename one');
      expect(gateway.posted).toEqual([]);

      rmSync(join(folder, 'more', 'one.txt'));
      const first = await run('ingest', [...paths, '--url', gateway.url, '--wait', '0'], { INIT_CWD: folder });
      expect(first.status).toBe(0);
      expect(first.stdout).toContain('queued 3 documents for kb "demo"');
      expect(gateway.posted.flatMap((post) => post.docIds)).toEqual(['one', 'two', 'three']);

      gateway.posted.length = 0;
      const again = await run('ingest', [...paths, '--url', gateway.url, '--wait', '0'], { INIT_CWD: folder });
      expect(again.stdout).toContain('3 file(s) skipped, accepted by an earlier run');
      expect(gateway.posted).toEqual([]);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  }, 60_000);

  it('ingest - a folder of 10,000 files, PDF, HTML and DOCX among them, goes in batches; bad files are reported at the end, the rest go in, and a second run sends nothing again', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'hopline-ingest-'));
    mkdirSync(join(folder, 'notes'));
    for (let i = 0; i < 10_000; i++)
      writeFileSync(join(folder, 'notes', `note-${i}.txt`), `Note ${i} about topic ${i % 97}.`);
    writeFileSync(join(folder, 'manual.pdf'), makePdf(['Installing the pump.', 'Servicing the pump.']));
    writeFileSync(join(folder, 'scan.pdf'), makePdf([''], { textLayer: false }));
    writeFileSync(join(folder, 'corrupt.pdf'), makePdf(['Lost.']).subarray(0, 60));
    writeFileSync(
      join(folder, 'guide.html'),
      '<title>Guide</title><main><h2>Start</h2><p>Press the green button.</p></main>',
    );
    writeFileSync(join(folder, 'policy.docx'), await makeDocx([['Normal', 'Economy class for short flights.']]));
    const gateway = await standInGateway();
    try {
      const first = await run('ingest', ['.', '--url', gateway.url], { INIT_CWD: folder });
      expect(first.status).toBe(1);
      expect(first.stdout).toContain('queued 10003 documents for kb "demo"');
      expect(first.stderr).toContain('2 file(s) not ingested:');
      expect(first.stderr).toMatch(/ {2}corrupt\.pdf: not a readable PDF/);
      expect(first.stderr).toContain(
        '  scan.pdf: a PDF of 1 page(s) without a text layer (a scan?): run OCR on it first',
      );
      const documents = gateway.posted.flatMap((post) => post.documents);
      expect(documents).toHaveLength(10_003);
      expect(gateway.posted.length).toBeGreaterThanOrEqual(20);
      expect(documents.find((document) => document.docId === 'manual')).toMatchObject({
        text: 'Installing the pump.\n\nServicing the pump.',
        sourceUri: 'manual.pdf',
        sections: [
          { start: 0, fragment: 'page=1' },
          { start: 22, fragment: 'page=2' },
        ],
      });
      expect(documents.find((document) => document.docId === 'guide')).toMatchObject({ title: 'Guide' });
      expect(documents.find((document) => document.docId === 'policy')).toMatchObject({
        text: 'Economy class for short flights.',
      });

      gateway.posted.length = 0;
      const second = await run('ingest', ['.', '--url', gateway.url], { INIT_CWD: folder });
      expect(second.stdout).toContain('queued 0 documents for kb "demo"');
      expect(second.stdout).toContain('10003 file(s) skipped, accepted by an earlier run');
      expect(gateway.posted).toEqual([]);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  }, 300_000);

  it("ingest - documents count as searchable once the slowest worker's lag is past them, and the run waits for them", async () => {
    const folder = mkdtempSync(join(tmpdir(), 'hopline-ingest-'));
    for (const name of ['a', 'b', 'c']) writeFileSync(join(folder, `${name}.txt`), `Document ${name}.`);
    const gateway = await standInGateway({ lags: [7, 3, 0] });
    try {
      const result = await run('ingest', ['.', '--url', gateway.url], { INIT_CWD: folder });
      expect(result.status).toBe(0);
      expect(result.stdout).toContain('queued 3 documents');
      expect(result.stdout).toContain('all 3 documents searchable');
      expect(gateway.lagPolls).toBeGreaterThanOrEqual(3);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  }, 60_000);

  it('ingest - workers whose lag does not shrink are waited for only --wait seconds; the run still succeeds', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'hopline-ingest-'));
    for (const name of ['a', 'b', 'c']) writeFileSync(join(folder, `${name}.txt`), `Document ${name}.`);
    const gateway = await standInGateway({ lags: [5] });
    try {
      const result = await run('ingest', ['.', '--url', gateway.url, '--wait', '1'], { INIT_CWD: folder });
      expect(result.status).toBe(0);
      expect(result.stdout).toContain('0 of 3 documents searchable so far; the rest are still being indexed');
      const usage = await run('ingest', ['.', '--url', gateway.url, '--wait', 'soon'], { INIT_CWD: folder });
      expect(usage.status).toBe(2);
      expect(usage.stderr).toContain('error: --wait takes seconds (0 or more), not "soon"');
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  }, 60_000);

  it('ingest - a file the gateway refuses as too large fails alone: its batch goes again a file at a time, the others go in', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'hopline-ingest-'));
    for (const name of ['a', 'b', 'd']) writeFileSync(join(folder, `${name}.txt`), `Document ${name}.`);
    writeFileSync(join(folder, 'c-huge.txt'), 'x'.repeat(2_000));
    const gateway = await standInGateway({ maxLineBytes: 1_000 });
    try {
      const first = await run('ingest', ['.', '--url', gateway.url], { INIT_CWD: folder });
      expect(first.status).toBe(1);
      expect(first.stdout).toContain('queued 3 documents');
      expect(first.stderr).toContain(
        '1 file(s) not ingested:\n  c-huge.txt: 413 Request body too large: the document on line 1 exceeds 1000 bytes (INGEST_MAX_DOCUMENT_BYTES)',
      );
      expect(gateway.posted.map((post) => post.docIds)).toEqual([['a'], ['b'], ['d']]);

      gateway.posted.length = 0;
      const again = await run('ingest', ['.', '--url', gateway.url], { INIT_CWD: folder });
      expect(again.stdout).toContain('3 file(s) skipped, accepted by an earlier run');
      expect(again.stderr).toContain('c-huge.txt: 413');
      expect(gateway.posted).toEqual([]);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  }, 60_000);

  it('ingest - a file the gateway hangs up on mid-upload fails alone; the others go in', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'hopline-ingest-'));
    for (const name of ['a', 'b', 'd']) writeFileSync(join(folder, `${name}.txt`), `Document ${name}.`);
    writeFileSync(join(folder, 'c-huge.txt'), 'x '.repeat(4_000_000));
    const gateway = await standInGateway({ hangUpPastBytes: 100_000 });
    try {
      const result = await run('ingest', ['.', '--url', gateway.url], { INIT_CWD: folder });
      expect(result.status).toBe(1);
      expect(result.stdout).toContain('queued 3 documents');
      expect(result.stderr).toContain(
        '1 file(s) not ingested:\n  c-huge.txt: the gateway closed the connection while it was being sent',
      );
      expect(gateway.posted.map((post) => post.docIds)).toEqual([['a'], ['b'], ['d']]);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  }, 60_000);

  it.each([429, 503] as const)(
    'ingest - a batch refused for now (%i with Retry-After) goes again after the wait it names; past --retry-for the run stops',
    async (status) => {
      const folder = mkdtempSync(join(tmpdir(), 'hopline-ingest-'));
      for (let i = 0; i < 1_200; i++)
        writeFileSync(join(folder, `doc-${String(i).padStart(4, '0')}.txt`), `Document ${i}.`);
      try {
        // The second batch is refused twice, one second each time, then taken.
        const patient = await standInGateway({ busy: { requests: [1, 2], status, retryAfter: '1' } });
        const waited = await run('ingest', ['.', '--url', patient.url, '--wait', '0'], { INIT_CWD: folder });
        expect(waited.status).toBe(0);
        expect(waited.stdout).toContain('2 refusal(s) for now waited out, 2 s in all');
        expect(patient.posted.flatMap((post) => post.documents)).toHaveLength(1_200);

        // Allowed one second of waiting, the run waits once and stops at the second refusal.
        const hasty = await standInGateway({ busy: { requests: [1, 2], status, retryAfter: '1' } });
        const stopped = await run('ingest', ['.', '--url', hasty.url, '--wait', '0', '--retry-for', '1', '--restart'], {
          INIT_CWD: folder,
        });
        expect(stopped.status).toBe(1);
        expect(stopped.stderr).toContain(`error: ${status} Too many requests: wait`);
        expect(hasty.posted.flatMap((post) => post.documents)).toHaveLength(500);
      } finally {
        rmSync(folder, { recursive: true, force: true });
      }
    },
    60_000,
  );

  it('ingest - a Retry-After of 0 is waited as a second: the batch goes again after it, and --retry-for 0 stops at the refusal', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'hopline-ingest-'));
    writeFileSync(join(folder, 'a.txt'), 'Document a.');
    try {
      const patient = await standInGateway({ busy: { requests: [0], status: 429, retryAfter: '0' } });
      const waited = await run('ingest', ['.', '--url', patient.url, '--wait', '0'], { INIT_CWD: folder });
      expect(waited.status).toBe(0);
      expect(waited.stdout).toContain('1 refusal(s) for now waited out, 1 s in all');
      expect(patient.posted.map((post) => post.docIds)).toEqual([['a']]);

      const hasty = await standInGateway({ busy: { requests: [0], status: 429, retryAfter: '0' } });
      const stopped = await run('ingest', ['.', '--url', hasty.url, '--wait', '0', '--retry-for', '0', '--restart'], {
        INIT_CWD: folder,
      });
      expect(stopped.status).toBe(1);
      expect(stopped.stderr).toContain('error: 429 Too many requests: wait');
      expect(hasty.posted).toEqual([]);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  }, 60_000);

  it('ingest - a JSONL file that gives one document id on two lines is reported and not sent; the other files go in', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'hopline-ingest-'));
    writeFileSync(join(folder, 'a.txt'), 'Document a.');
    writeFileSync(join(folder, 'faq.jsonl'), '{"docId":"faq","text":"first"}\n{"docId":"faq","text":"second"}\n');
    const gateway = await standInGateway();
    try {
      const result = await run('ingest', ['.', '--url', gateway.url, '--wait', '0'], { INIT_CWD: folder });
      expect(result.status).toBe(1);
      expect(result.stderr).toContain(
        '1 file(s) not ingested:\n  document id "faq" comes from both faq.jsonl:1 and faq.jsonl:2: rename one',
      );
      expect(gateway.posted.map((post) => post.docIds)).toEqual([['a']]);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  }, 60_000);

  it('ingest - a refused batch that stops the run still reports the files that had failed before it', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'hopline-ingest-'));
    writeFileSync(join(folder, 'a-broken.jsonl'), '{"docId": "a", "text": \n');
    writeFileSync(join(folder, 'b-good.md'), '# B\n\nBeta.');
    const gateway = await standInGateway({ refuseFrom: 0 });
    try {
      const result = await run('ingest', ['.', '--url', gateway.url, '--wait', '0'], { INIT_CWD: folder });
      expect(result.status).toBe(1);
      const lines = result.stderr.trim().split('\n');
      expect(lines).toEqual([
        '1 file(s) not ingested:',
        expect.stringMatching(/^ {2}a-broken\.jsonl:1: /),
        'error: 503 Service unavailable: try later',
      ]);
      expect(gateway.posted).toEqual([]);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it('ingest - a refused batch stops the run, and the next run resumes after the batches that were accepted', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'hopline-ingest-'));
    for (let i = 0; i < 1_200; i++)
      writeFileSync(join(folder, `doc-${String(i).padStart(4, '0')}.txt`), `Document ${i}.`);
    const gateway = await standInGateway({ refuseFrom: 2 });
    try {
      const first = await run('ingest', ['.', '--url', gateway.url], { INIT_CWD: folder });
      expect(first.status).toBe(1);
      expect(first.stderr).toContain('error: 503 Service unavailable: try later');
      expect(gateway.posted.flatMap((post) => post.documents)).toHaveLength(1_000);

      gateway.refuseFrom = Infinity;
      gateway.posted.length = 0;
      const resumed = await run('ingest', ['.', '--url', gateway.url], { INIT_CWD: folder });
      expect(resumed.status).toBe(0);
      expect(gateway.posted.flatMap((post) => post.documents.map((document) => document.docId))).toEqual(
        Array.from({ length: 200 }, (_, i) => `doc-${1_000 + i}`),
      );

      gateway.posted.length = 0;
      const restarted = await run('ingest', ['.', '--url', gateway.url, '--restart'], { INIT_CWD: folder });
      expect(restarted.stdout).toContain('queued 1200 documents');
      expect(gateway.posted.flatMap((post) => post.documents)).toHaveLength(1_200);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  }, 120_000);

  it('fabric:credentials - a folder it cannot write is a failure (status 1) with its reason, without the usage', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'hopline-fabric-'));
    writeFileSync(join(folder, 'a-file'), 'not a folder');
    try {
      const result = await run('fabric-credentials', ['--out', 'a-file/fabric'], { INIT_CWD: folder });
      expect(result.status).toBe(1);
      expect(result.stderr).toMatch(/^error: .*(ENOTDIR|EEXIST)/);
      expect(result.stderr).not.toContain('usage: pnpm fabric:credentials');
      const unknown = await run('fabric-credentials', ['--bogus'], { INIT_CWD: folder });
      expect(unknown.status).toBe(2);
      expect(unknown.stderr).toContain('usage: pnpm fabric:credentials');
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it('fabric:credentials - run again, it keeps the CA and the NATS keys and issues with them; --new-ca and --new-nats-keys replace them; a CA found in part is refused', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'hopline-fabric-'));
    const file = (relative: string) => readFileSync(join(folder, 'fabric', relative), 'utf8');
    const certificate = (relative: string) => new X509Certificate(file(relative));
    // The operator and accounts NATS is configured to trust.
    const natsTrust = () => {
      const { config } = JSON.parse(file('nats.values.yaml').replace(/^#.*\n/, '')) as {
        config: { merge: { operator: string; resolver_preload: Record<string, string> } };
      };
      const operator = JSON.parse(Buffer.from(config.merge.operator.split('.')[1] ?? '', 'base64url').toString()) as {
        sub: string;
      };
      return { operator: operator.sub, accounts: Object.keys(config.merge.resolver_preload).sort() };
    };
    const fabric = (...options: string[]) =>
      run('fabric-credentials', ['--out', 'fabric', ...options], { INIT_CWD: folder });
    try {
      expect((await fabric()).status).toBe(0);
      const first = {
        ca: file('ca.crt'),
        gateway: file('answer-gateway/tls.crt'),
        seed: file('answer-gateway/nats.nk'),
        trust: natsTrust(),
      };

      const again = await fabric();
      expect(again.status).toBe(0);
      expect(again.stderr).toContain('kept: the CA (ca.crt, ca.key)');
      expect(again.stderr).toContain('kept: the NATS operator and accounts');
      expect(again.stderr).toContain('made: certificates for NATS and the 5 services');
      expect(file('ca.crt')).toBe(first.ca);
      expect(file('answer-gateway/tls.crt')).not.toBe(first.gateway);
      const ca = new X509Certificate(first.ca);
      for (const leaf of ['nats/tls.crt', 'answer-gateway/tls.crt', 'reranker/tls.crt']) {
        expect(certificate(leaf).verify(ca.publicKey)).toBe(true);
        expect(certificate(leaf).checkIssued(ca)).toBe(true);
      }
      expect(file('answer-gateway/nats.nk')).toBe(first.seed);
      expect(natsTrust()).toEqual(first.trust);

      const reissued = file('answer-gateway/tls.crt');
      renameSync(join(folder, 'fabric', 'ca.key'), join(folder, 'ca.key'));
      const partial = await fabric();
      expect(partial.status).toBe(1);
      expect(partial.stderr).toContain('ca.key is missing while the rest of the CA is there');
      expect(partial.stderr).toContain('--new-ca');
      expect(file('answer-gateway/tls.crt')).toBe(reissued);

      const renewed = await fabric('--new-ca', '--new-nats-keys');
      expect(renewed.status).toBe(0);
      expect(renewed.stderr).toContain('made: a new CA (ca.crt, ca.key): certificates issued by the one it replaces');
      expect(file('ca.crt')).not.toBe(first.ca);
      expect(certificate('answer-gateway/tls.crt').verify(ca.publicKey)).toBe(false);
      expect(certificate('answer-gateway/tls.crt').verify(certificate('ca.crt').publicKey)).toBe(true);
      expect(file('answer-gateway/nats.nk')).not.toBe(first.seed);
      expect(natsTrust().operator).not.toBe(first.trust.operator);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it('fabric:credentials - kept keys that cannot sign (a mangled seed, a CA key of another CA) are refused, and the certificates there stay as they were', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'hopline-fabric-'));
    const path = (relative: string) => join(folder, 'fabric', relative);
    const fabric = () => run('fabric-credentials', ['--out', 'fabric'], { INIT_CWD: folder });
    try {
      expect((await fabric()).status).toBe(0);
      const issued = {
        cert: readFileSync(path('nats/tls.crt'), 'utf8'),
        key: readFileSync(path('nats/tls.key'), 'utf8'),
      };
      const seed = readFileSync(path('embedded/nats.nk'), 'utf8');

      writeFileSync(path('embedded/nats.nk'), 'SUNOTASEED\n');
      const mangled = await fabric();
      expect(mangled.status).toBe(1);
      expect(mangled.stderr).toContain(
        "the seed kept for NATS user embedded (embedded/nats.nk) is not a user's nkey seed",
      );
      writeFileSync(path('embedded/nats.nk'), seed);

      writeFileSync(path('nats-account.nk'), readFileSync(path('nats-operator.nk')));
      const misplaced = await fabric();
      expect(misplaced.status).toBe(1);
      expect(misplaced.stderr).toContain('the NATS operator and accounts kept in');
      expect(misplaced.stderr).toContain('cannot sign');

      rmSync(path('nats-account.nk'));
      rmSync(path('nats-operator.nk'));
      rmSync(path('nats-system-account.nk'));
      const otherCa = mkdtempSync(join(tmpdir(), 'hopline-fabric-'));
      try {
        expect((await run('fabric-credentials', ['--out', 'fabric'], { INIT_CWD: otherCa })).status).toBe(0);
        writeFileSync(path('ca.key'), readFileSync(join(otherCa, 'fabric', 'ca.key')));
      } finally {
        rmSync(otherCa, { recursive: true, force: true });
      }
      const mismatched = await fabric();
      expect(mismatched.status).toBe(1);
      expect(mismatched.stderr).toContain('CA certificate and CA private key do not match');
      expect({
        cert: readFileSync(path('nats/tls.crt'), 'utf8'),
        key: readFileSync(path('nats/tls.key'), 'utf8'),
      }).toEqual(issued);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it('fabric:credentials - a --namespace that is not a DNS label is a usage error, and nothing is written', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'hopline-fabric-'));
    try {
      for (const namespace of ['Prod NS!', 'prod.eu', '-prod', 'x'.repeat(64)]) {
        const result = await run('fabric-credentials', ['--out', 'fabric', `--namespace=${namespace}`], {
          INIT_CWD: folder,
        });
        expect(result.status).toBe(2);
        expect(result.stderr).toContain(
          `error: --namespace takes a Kubernetes namespace (a DNS label), not "${namespace}"`,
        );
        expect(result.stderr).toContain('usage: pnpm fabric:credentials');
      }
      expect(existsSync(join(folder, 'fabric'))).toBe(false);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });
});

interface PostedDocument {
  docId: string;
  title: string;
  text: string;
  sourceUri?: string;
  sections?: Array<{ start: number; fragment: string }>;
}

/**
 * A gateway's ingestion API that keeps what it was sent; from the `refuseFrom`-th request on, 503.
 * `GET /v1/kbs` reports one worker whose ingest lag is the next of `lags` (the last one repeats),
 * or no worker without them.
 */
async function standInGateway(
  options: {
    refuseFrom?: number;
    lags?: number[];
    maxLineBytes?: number;
    hangUpPastBytes?: number;
    /** Requests (counted from 0) refused for now, with this status and Retry-After. */
    busy?: { requests: number[]; status: 429 | 503; retryAfter: string };
  } = {},
) {
  const lags = [...(options.lags ?? [])];
  const state = {
    url: '',
    lagPolls: 0,
    refuseFrom: options.refuseFrom ?? Infinity,
    posted: [] as Array<{
      path: string | undefined;
      contentType: string | undefined;
      docIds: string[];
      documents: PostedDocument[];
    }>,
  };
  let requests = 0;
  state.url = await listen(
    createServer((request, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => {
        body += chunk.toString();
        // As the gateway refuses a line over its limit: without reading on, closing the connection.
        if (body.length > (options.hangUpPastBytes ?? Infinity)) request.socket.destroy();
      });
      request.on('end', () => {
        if (request.method === 'GET' && request.url === '/v1/kbs') {
          state.lagPolls++;
          const lag = lags.length > 1 ? lags.shift() : lags[0];
          response.writeHead(200, { 'Content-Type': 'application/json' });
          response.end(
            JSON.stringify({ kbs: [], indexLag: lag === undefined ? [] : [{ workerId: 'w1', ingestLag: lag }] }),
          );
          return;
        }
        if (options.busy?.requests.includes(requests)) {
          requests++;
          response.writeHead(options.busy.status, {
            'Content-Type': 'application/problem+json',
            'Retry-After': options.busy.retryAfter,
          });
          response.end(JSON.stringify({ title: 'Too many requests', detail: 'wait' }));
          return;
        }
        if (requests++ >= state.refuseFrom) {
          response.writeHead(503, { 'Content-Type': 'application/problem+json' });
          response.end(JSON.stringify({ title: 'Service unavailable', detail: 'try later' }));
          return;
        }
        const lines = body.split('\n').filter((line) => line.trim() !== '');
        const tooLong = lines.findIndex((line) => Buffer.byteLength(line) > (options.maxLineBytes ?? Infinity));
        if (tooLong !== -1) {
          response.writeHead(413, { 'Content-Type': 'application/problem+json' });
          response.end(
            JSON.stringify({
              title: 'Request body too large',
              detail: `the document on line ${tooLong + 1} exceeds ${options.maxLineBytes} bytes (INGEST_MAX_DOCUMENT_BYTES)`,
            }),
          );
          return;
        }
        const documents = lines.map((line) => JSON.parse(line) as PostedDocument);
        const docIds = documents.map((document) => document.docId);
        state.posted.push({ path: request.url, contentType: request.headers['content-type'], docIds, documents });
        response.writeHead(202, { 'Content-Type': 'application/json' });
        response.end(JSON.stringify({ accepted: docIds.map((docId) => ({ docId, duplicate: false })) }));
      });
    }),
  );
  return state;
}
