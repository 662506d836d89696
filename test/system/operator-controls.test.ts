import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readSse } from '@hopline/cli';
import { startEmbedded, type Embedded } from '@hopline/embedded';
import { embeddedTestConfig } from './support/embedded-config.js';
import { startNatsServer, waitFor, type NatsServerProcess } from '@hopline/test-support';

// A server of this file's own: the controls apply to every hop-reasoner on a server, so
// switching multi-hop off on a shared one would change other test files' questions.
const nats = await startNatsServer();
const dataDir = mkdtempSync(join(tmpdir(), 'hopline-controls-'));
let hopline: Embedded;

beforeAll(async () => {
  const url = (nats as NatsServerProcess).url;
  const config = embeddedTestConfig(dataDir, { NATS_URL: url });
  // No answer cache: the same question is answered again under each change of the controls.
  hopline = await startEmbedded(config, { CACHE_MAX_ENTRIES: '0' });
}, 60_000);
afterAll(async () => {
  await hopline?.stop();
  await nats?.[Symbol.asyncDispose]();
  rmSync(dataDir, { recursive: true, force: true });
});

/** `pnpm controls …`, the operators' one command, as a process of its own. */
async function controls(...args: string[]): Promise<{ code: number; out: string }> {
  try {
    const { stdout } = await promisify(execFile)('pnpm', ['--silent', 'controls', ...args], {
      env: { ...process.env, NATS_URL: nats?.url },
    });
    return { code: 0, out: stdout.trim() };
  } catch (error) {
    const failed = error as { code: number; stderr: string };
    return { code: failed.code, out: failed.stderr.trim() };
  }
}

/** The route event and the done event of one question asked over SSE. */
async function ask(): Promise<{ route: Record<string, unknown>; done: Record<string, unknown> }> {
  const response = await fetch(`${hopline.httpUrl}/v1/ask`, {
    method: 'POST',
    headers: {
      Authorization: `Bearer ${hopline.devKey?.key ?? ''}`,
      'Content-Type': 'application/json',
      Accept: 'text/event-stream',
    },
    body: JSON.stringify({ question: 'Which department does the owner of Project Atlas belong to?', kbIds: ['demo'] }),
  });
  const events: Record<string, Record<string, unknown>> = {};
  for await (const event of readSse(response.body as ReadableStream<Uint8Array>)) {
    events[event.event] = JSON.parse(event.data) as Record<string, unknown>;
  }
  return { route: events.route ?? {}, done: events.done ?? {} };
}

const metric = async (name: string): Promise<string | undefined> =>
  (await (await fetch(hopline.metricsUrl)).text()).match(new RegExp(`^${name}\\{[^}]*\\} (\\S+)$`, 'm'))?.[1];

describe.skipIf(nats === undefined)('system - operators’ controls over NATS', () => {
  it('controls - one command switches multi-hop off and caps hops for the next questions, without a restart', async () => {
    const before = await ask();
    expect(before.route).toMatchObject({ route: 'ITERATIVE', controls: { multiHop: true, hopCap: 5 } });
    expect(before.done.hops).toBe(2);
    expect(await metric('hopline_control_multi_hop')).toBe('1');

    expect(await controls('--multi-hop', 'off')).toEqual({ code: 0, out: 'multi-hop off, hop cap 5' });
    await waitFor(async () => (await metric('hopline_control_multi_hop')) === '0');
    const singleShot = await ask();
    expect(singleShot.route).toMatchObject({ route: 'SINGLE', controls: { multiHop: false, hopCap: 5 } });
    expect(singleShot.done.hops).toBe(1);

    expect(await controls('--multi-hop', 'on', '--hop-cap', '1')).toEqual({ code: 0, out: 'multi-hop on, hop cap 1' });
    await waitFor(async () => (await metric('hopline_control_hop_cap')) === '1');
    const capped = await ask();
    expect(capped.route).toMatchObject({ route: 'ITERATIVE', controls: { multiHop: true, hopCap: 1 } });
    expect(capped.done.hops).toBe(1);
    expect(await metric('hopline_control_multi_hop')).toBe('1');

    // A cap outside 1..5 never reaches the bucket.
    const refused = await controls('--hop-cap', '9');
    expect(refused.code).toBe(2);
    expect(refused.out).toMatch(/--hop-cap takes 1 to 5/);
    expect(await controls()).toEqual({ code: 0, out: 'multi-hop on, hop cap 1' });
  }, 90_000);
});
