import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { SearchableWatch } from '../src/searchable.js';

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

/** A gateway whose GET /v1/kbs reports the workers' lags the test sets; `status` other than 200 fails the poll. */
async function gateway(): Promise<{ url: URL; lags: number[]; status: number; keys: string[]; paths: string[] }> {
  const state = {
    url: new URL('http://127.0.0.1'),
    lags: [] as number[],
    status: 200,
    keys: [] as string[],
    paths: [] as string[],
  };
  const server = createServer((request, response) => {
    state.keys.push(request.headers.authorization ?? '');
    state.paths.push(request.url ?? '');
    response.writeHead(state.status, { 'Content-Type': 'application/json' });
    response.end(
      JSON.stringify({ kbs: [], indexLag: state.lags.map((ingestLag, i) => ({ workerId: `w${i}`, ingestLag })) }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(() => new Promise((resolve) => server.close(() => resolve())));
  state.url = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  return state;
}

describe('searchable documents', () => {
  it('searchable - a gateway behind a proxy path is polled under that path', async () => {
    const stub = await gateway();
    stub.lags = [0];
    const watch = new SearchableWatch(new URL('/hopline/', stub.url), 'hl_key');
    await watch.poll();
    expect(stub.paths).toEqual(['/hopline/v1/kbs']);
  });

  it("searchable - counts what was accepted before the slowest worker's beat could be sent, and all once its lag settles at 0", async () => {
    const stub = await gateway();
    let now = 0;
    const watch = new SearchableWatch(stub.url, 'hl_key', () => now);
    expect(watch.searchable).toBeUndefined();

    now = 1_000;
    watch.acceptedNow(100);
    stub.lags = [40, 10];
    now = 1_500;
    await watch.poll();
    // The beat behind that lag may predate the 100 just accepted.
    expect(watch.searchable).toBe(0);
    now = 3_500;
    await watch.poll();
    expect(watch.searchable).toBe(60);

    now = 4_000;
    watch.acceptedNow(200);
    stub.lags = [0, 0];
    now = 4_500;
    await watch.poll();
    expect(watch.searchable).toBe(100);
    now = 6_500;
    await watch.poll();
    expect(watch.searchable).toBe(200);
    expect(stub.keys.every((key) => key === 'Bearer hl_key')).toBe(true);
  });

  it('searchable - a failed poll keeps the last count; a gateway reporting no worker leaves it unknown, or makes it so again', async () => {
    const stub = await gateway();
    let now = 0;
    const watch = new SearchableWatch(stub.url, 'hl_key', () => now);
    watch.acceptedNow(10);
    now = 3_000;
    await watch.poll();
    expect(watch.searchable).toBeUndefined();
    stub.lags = [4];
    await watch.poll();
    expect(watch.searchable).toBe(6);
    stub.status = 503;
    stub.lags = [0];
    now = 6_000;
    await watch.poll();
    expect(watch.searchable).toBe(6);
    stub.status = 200;
    stub.lags = [];
    await watch.poll();
    expect(watch.searchable).toBeUndefined();
  });

  it('searchable - polls that fail after a lag of 0 read within a beat of the last batch end the wait after its patience', async () => {
    const stub = await gateway();
    let now = 1_000;
    const watch = new SearchableWatch(stub.url, 'hl_key', () => now);
    watch.acceptedNow(500);
    stub.lags = [0];
    now = 1_500;
    await watch.poll();
    // That beat may predate the batch: nothing counts as searchable until a later poll says so.
    expect(watch.searchable).toBe(0);
    stub.status = 503;
    let polls = 0;
    await watch.untilSearchable(2_000, () => {
      polls++;
      now += 1_000;
    });
    expect(polls).toBe(2);
    expect(watch.searchable).toBe(0);
  }, 10_000);
});
