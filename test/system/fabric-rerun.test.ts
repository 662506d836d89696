// A second run of pnpm fabric:credentials over the first one's folder, as a rotation runs it:
// NATS and the services pick up the new files one by one, in any order, so each side must still
// accept the other's files from either run (operator mode from the chart's values, over TLS).
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, credsAuthenticator } from 'nats';
import { afterAll, describe, expect, it } from 'vitest';
import { fabricLayout, writeFabric } from '@hopline/cli';
import { startNatsServer } from '@hopline/test-support';
import { parse } from 'yaml';
import { z } from 'zod';
import { natsTlsBlock } from './support/fabric-nats.js';

const folder = mkdtempSync(join(tmpdir(), 'hopline-fabric-rerun-'));
const fabric = join(folder, 'fabric');
const firstRun = join(folder, 'first-run');
await writeFabric(fabric, { namespace: 'test' });
cpSync(fabric, firstRun, { recursive: true });
await writeFabric(fabric, { namespace: 'test' });

/** A NATS server configured from one run's files: its certificate, its CA, the chart's values. */
async function natsFrom(dir: string) {
  const file = (relative: string) => join(dir, relative);
  const merge = z
    .object({ config: z.object({ merge: z.record(z.string(), z.unknown()) }) })
    .parse(parse(readFileSync(file(fabricLayout.chartValues), 'utf8'))).config.merge;
  return startNatsServer({
    config: [
      ...natsTlsBlock(file),
      ...Object.entries(merge).map(([key, value]) => `${key}: ${JSON.stringify(value)}`),
    ].join('\n'),
  });
}

const natsOnFirstRun = await natsFrom(firstRun);
const natsOnRerun = await natsFrom(fabric);

afterAll(async () => {
  await natsOnFirstRun?.[Symbol.asyncDispose]();
  await natsOnRerun?.[Symbol.asyncDispose]();
  rmSync(folder, { recursive: true, force: true });
});

/** Connects as the gateway with one run's credentials file and CA, and makes a round trip. */
async function roundTrip(url: string, dir: string): Promise<void> {
  const client = await connect({
    servers: url,
    authenticator: credsAuthenticator(readFileSync(join(dir, fabricLayout.userCreds('answer-gateway')))),
    tls: { caFile: join(dir, fabricLayout.caCert) },
  });
  await client.flush();
  await client.close();
}

describe.skipIf(!natsOnFirstRun || !natsOnRerun)('fabric - pnpm fabric:credentials run again', () => {
  it('fabric - a rerun rolls out in any order: NATS on either run takes the credentials of either run over TLS', async () => {
    await expect(roundTrip(natsOnRerun!.url, firstRun)).resolves.toBeUndefined();
    await expect(roundTrip(natsOnFirstRun!.url, fabric)).resolves.toBeUndefined();
    expect(readFileSync(join(fabric, fabricLayout.userCreds('answer-gateway')), 'utf8')).not.toBe(
      readFileSync(join(firstRun, fabricLayout.userCreds('answer-gateway')), 'utf8'),
    );
  });
});
