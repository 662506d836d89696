// `pnpm ask` and `pnpm ingest` as a user runs them: real processes, against a stand-in gateway
// that speaks the documented wire format.
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';

const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));

interface Run {
  status: number;
  stdout: string;
  stderr: string;
}

function run(command: 'ask' | 'ingest', args: string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--conditions=@hopline/source', '--import', 'tsx', `packages/cli/src/${command}.ts`, ...args],
      { cwd: repoRoot, env: { ...process.env, HOPLINE_URL: '', HOPLINE_API_KEY: 'hl_test', ...env } },
      (error, stdout, stderr) => resolve({ status: error ? Number(error.code) : 0, stdout, stderr }),
    );
  });
}

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

  it('ingest - a relative path means the folder pnpm was run in (INIT_CWD), not the repository root', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'hopline-ingest-'));
    mkdirSync(join(folder, 'notes'));
    writeFileSync(join(folder, 'notes', 'atlas.md'), '# Project Atlas\n\nOwned by Mira Chen.');
    const posted: Array<{ path: string | undefined; docIds: string[] }> = [];
    const url = await listen(
      createServer((request, response) => {
        let body = '';
        request.on('data', (chunk: Buffer) => (body += chunk.toString()));
        request.on('end', () => {
          const { documents } = JSON.parse(body) as { documents: Array<{ docId: string }> };
          posted.push({ path: request.url, docIds: documents.map((document) => document.docId) });
          response.writeHead(202, { 'Content-Type': 'application/json' });
          response.end(JSON.stringify({ accepted: documents.map((d) => ({ docId: d.docId, duplicate: false })) }));
        });
      }),
    );
    try {
      const result = await run('ingest', ['notes', '--kb', 'handbook', '--url', url], { INIT_CWD: folder });
      expect(result.stderr).toBe('');
      expect(result.stdout).toContain('queued 1 documents for kb "handbook"');
      expect(posted).toEqual([{ path: '/v1/kbs/handbook/documents', docIds: ['atlas'] }]);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });
});
