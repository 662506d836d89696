import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { hashApiKey } from '@hopline/answer-gateway';
import { connectNatsBus, type Bus } from '@hopline/bus';
import { freePort, startNats, startNatsServer, waitFor, type NatsFixture } from '@hopline/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeReasoner, twoHopScript } from '../../services/answer-gateway/test/support/fake-reasoner.js';
import { askSse, testKeys } from '../../services/answer-gateway/test/support/harness.js';

const SERVICE_DIR = fileURLToPath(new URL('../../services/answer-gateway/', import.meta.url));
const nats: NatsFixture = await startNats();

interface GatewayProcess {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
  httpUrl: string;
  opsUrl: string;
}

async function startGatewayProcess(env: Record<string, string>): Promise<GatewayProcess> {
  const [http, grpc, ops] = [await freePort(), await freePort(), await freePort()];
  const child = spawn(
    process.execPath,
    ['--conditions=@hopline/source', '--import', 'tsx', '--import', './src/instrumentation.ts', './src/main.ts'],
    {
      cwd: SERVICE_DIR,
      env: {
        ...process.env,
        HTTP_HOST: '127.0.0.1',
        HTTP_PORT: String(http),
        GRPC_HOST: '127.0.0.1',
        GRPC_PORT: String(grpc),
        METRICS_PORT: String(ops),
        OTEL_SDK_DISABLED: 'true',
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const opsUrl = `http://127.0.0.1:${ops}`;
  await waitFor(
    async () =>
      child.exitCode === null &&
      (await fetch(`${opsUrl}/healthz`).then(
        (r) => r.ok,
        () => false,
      )),
    {
      timeoutMs: 30_000,
      description: `the gateway process to be healthy; output:\n${output}`,
    },
  ).catch((error: unknown) => {
    child.kill('SIGKILL');
    throw new Error(`${(error as Error).message}\n${output}`);
  });
  return { child, output: () => output, exited, httpUrl: `http://127.0.0.1:${http}`, opsUrl };
}

describe.skipIf(!nats.url)('answer-gateway as its own process over NATS', () => {
  let bus: Bus;
  let reasoner: FakeReasoner;
  const keys = testKeys();
  const apiKeys = JSON.stringify({
    keys: Object.values(keys).map(({ key, ...entry }) => ({ keyHash: hashApiKey(key), ...entry })),
  });

  beforeAll(async () => {
    bus = await connectNatsBus({ url: nats.url ?? '', name: 'gateway-process-test' });
    reasoner = await FakeReasoner.start(bus, twoHopScript());
  });

  afterAll(async () => {
    await reasoner?.stop();
    await bus?.drain();
    await nats[Symbol.asyncDispose]();
  });

  it('starts from environment variables alone, answers over SSE through NATS, and serves metrics and health', async () => {
    reasoner.script = twoHopScript();
    const gateway = await startGatewayProcess({ NATS_URL: nats.url ?? '', API_KEYS: apiKeys });
    try {
      const stream = await askSse(gateway.httpUrl, keys.alice, {
        question: 'Which department does the owner of project Atlas belong to?',
      });
      await stream.ended;
      expect(stream.events.map((event) => event.name).slice(0, 2)).toEqual(['accepted', 'route']);
      expect(stream.events.at(-1)?.name).toBe('done');
      expect(stream.events.map((event) => event.id)).toEqual(stream.events.map((_, index) => index + 1));

      const metrics = await (await fetch(`${gateway.opsUrl}/metrics`)).text();
      expect(metrics).toContain('hopline_gateway_questions_in_flight');
      expect(metrics).toMatch(/hopline_cache_lookups_total\{[^}]*result="miss"[^}]*\} 1/);
      expect(await (await fetch(`${gateway.opsUrl}/healthz`)).json()).toMatchObject({
        ok: true,
        details: { bus: { kind: 'nats', connected: true }, cache: 'memory' },
      });
      expect(gateway.output()).toMatch(/"msg":"answer-gateway listening"/);
    } finally {
      gateway.child.kill('SIGTERM');
      await gateway.exited;
    }
  });

  it('on SIGTERM ends a question still running after the grace period with a retryable error, cancels it, and exits 0', async () => {
    reasoner.script = twoHopScript({ gated: true });
    const gateway = await startGatewayProcess({
      NATS_URL: nats.url ?? '',
      API_KEYS: apiKeys,
      SHUTDOWN_GRACE_MS: '200',
    });
    const stream = await askSse(gateway.httpUrl, keys.carol, { question: 'Who owns Atlas?' });
    await waitFor(() => stream.events.length >= 1);
    const questionId = String(stream.events[0]?.data.questionId);

    gateway.child.kill('SIGTERM');
    await stream.ended;
    expect(stream.events.at(-1)).toMatchObject({ name: 'error', data: { code: 'unavailable', retryable: true } });
    expect(await gateway.exited).toBe(0);
    expect((await waitFor(() => reasoner.record(questionId)?.cancel)).reason).toBe('shutdown');
    expect(gateway.output()).toMatch(/"msg":"shutting down"/);
  });

  it('refuses to start without API keys, naming the variables', async () => {
    const child = spawn(process.execPath, ['--conditions=@hopline/source', '--import', 'tsx', './src/main.ts'], {
      cwd: SERVICE_DIR,
      env: {
        ...process.env,
        NATS_URL: nats.url ?? '',
        HTTP_PORT: '0',
        GRPC_PORT: '0',
        OTEL_SDK_DISABLED: 'true',
        API_KEYS: '',
        API_KEYS_FILE: '',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code).not.toBe(0);
    expect(output).toContain('set API_KEYS_FILE to a keys file or API_KEYS to its JSON');
  });
});

const ownServer = await startNatsServer();

describe.skipIf(!ownServer)('answer-gateway process when NATS goes away', () => {
  afterAll(async () => {
    await ownServer?.[Symbol.asyncDispose]();
  });

  it('NATS down - /healthz is 503 with the reason, a new question gets 503 "message bus unavailable" with Retry-After, and both recover with NATS', async () => {
    const server = ownServer as NonNullable<typeof ownServer>;
    const keys = testKeys();
    const apiKeys = JSON.stringify({
      keys: Object.values(keys).map(({ key, ...entry }) => ({ keyHash: hashApiKey(key), ...entry })),
    });
    const reasonerBus = await connectNatsBus({ url: server.url, name: 'outage-reasoner' });
    const reasoner = await FakeReasoner.start(reasonerBus, twoHopScript());
    const gateway = await startGatewayProcess({ NATS_URL: server.url, API_KEYS: apiKeys });
    const ask = () =>
      fetch(`${gateway.httpUrl}/v1/ask`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${keys.alice.key}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ question: 'Who owns Atlas?' }),
      });
    try {
      await server.stop('SIGKILL');
      const health = await waitFor(async () => {
        const response = await fetch(`${gateway.opsUrl}/healthz`);
        return response.status === 503 ? ((await response.json()) as { details: { bus: Record<string, unknown> } }) : 0;
      });
      expect(health.details.bus).toMatchObject({ kind: 'nats', connected: false });
      expect(String(health.details.bus.reason)).toMatch(/lost the connection/);

      const refused = await ask();
      expect(refused.status).toBe(503);
      expect(refused.headers.get('retry-after')).toBe('2');
      expect(await refused.json()).toMatchObject({ detail: 'message bus unavailable' });

      await server.start();
      await waitFor(async () => (await fetch(`${gateway.opsUrl}/healthz`)).ok, { timeoutMs: 15_000 });
      await waitFor(async () => reasonerBus.connection().connected, { timeoutMs: 15_000 });
      expect((await ask()).status).toBe(200);
      expect(gateway.output()).toMatch(/"msg":"connected to NATS"/);
      expect(gateway.output()).toMatch(/"msg":"NATS connection lost; reconnecting"/);
      expect(gateway.output()).toMatch(/"msg":"NATS connection restored"/);
    } finally {
      gateway.child.kill('SIGTERM');
      await gateway.exited;
      await reasoner.stop();
      await reasonerBus.drain();
    }
  }, 60_000);
});
