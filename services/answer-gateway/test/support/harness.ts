import { randomBytes } from 'node:crypto';
import { createMemoryBroker, type Bus, type KeyValueStore } from '@hopline/bus';
import { openQuestionStreams, type QuestionStreams } from '@hopline/questions';
import { createLogger, createMetrics, type HoplineMetrics, type Logger } from '@hopline/telemetry';
import { ApiKeyStore, generateApiKey, hashApiKey } from '../../src/api-keys.js';
import type { AnswerCache } from '../../src/cache/answer-cache.js';
import { configSchema } from '../../src/config.js';
import { startAnswerGateway, type AnswerGateway, type GatewayConfig } from '../../src/gateway.js';
import { FakeReasoner, twoHopScript, type Script } from './fake-reasoner.js';

export interface TestKey {
  key: string;
  tenantId: string;
  userId: string;
  kbIds: string[];
  canIngest: boolean;
}

/**
 * Tenant A has two users; tenant B one; both tenants have a kb named "handbook". Only alice
 * and carol may ingest. Tenant ids are fresh per call, so that state a shared Redis keeps
 * from earlier runs can never match.
 */
export function testKeys(): Record<'alice' | 'bob' | 'carol', TestKey> {
  const run = randomBytes(4).toString('hex');
  return {
    alice: {
      key: generateApiKey(),
      tenantId: `tenant-a-${run}`,
      userId: 'alice',
      kbIds: ['handbook', 'projects'],
      canIngest: true,
    },
    bob: { key: generateApiKey(), tenantId: `tenant-a-${run}`, userId: 'bob', kbIds: ['handbook'], canIngest: false },
    carol: {
      key: generateApiKey(),
      tenantId: `tenant-b-${run}`,
      userId: 'carol',
      kbIds: ['handbook'],
      canIngest: true,
    },
  };
}

export function keyStoreOf(keys: Record<string, TestKey>): ApiKeyStore {
  return new ApiKeyStore({
    keys: Object.values(keys).map(({ key, ...entry }) => ({ keyHash: hashApiKey(key), ...entry })),
  });
}

export interface TestGateway extends AsyncDisposable {
  gateway: AnswerGateway;
  /** The bus the gateway is connected to. */
  bus: Bus;
  /** Another connection to the same broker: what the other services would use. */
  peerBus: Bus;
  reasoner: FakeReasoner;
  traces: KeyValueStore;
  keys: ReturnType<typeof testKeys>;
  metrics: HoplineMetrics;
  baseUrl: string;
  grpcAddress: string;
}

export interface TestGatewayOptions {
  config?: Partial<GatewayConfig>;
  /** The API keys; fresh ones by default. Two gateways given the same keys serve the same clients. */
  keys?: ReturnType<typeof testKeys>;
  script?: Script;
  cache?: AnswerCache;
  /** Where the gateway logs; silent by default. */
  logger?: Logger;
}

/** A gateway on `bus`, on free ports, with the given keys and config overrides; the caller stops it. */
export async function startGatewayOn(
  bus: Bus,
  keys: Record<string, TestKey>,
  options: {
    config?: Partial<GatewayConfig>;
    cache?: AnswerCache;
    metrics?: HoplineMetrics;
    logger?: Logger;
    questions?: QuestionStreams;
  } = {},
): Promise<{ gateway: AnswerGateway; baseUrl: string; grpcAddress: string }> {
  const config: GatewayConfig = {
    ...configSchema.parse({}),
    HTTP_HOST: '127.0.0.1',
    HTTP_PORT: 0,
    GRPC_HOST: '127.0.0.1',
    GRPC_PORT: 0,
    REDIS_URL: undefined,
    ...options.config,
  };
  const gateway = await startAnswerGateway({
    config,
    bus,
    questions: options.questions ?? (await openQuestionStreams(bus)),
    ingest: await bus.durableStream(),
    traces: await bus.keyValue(),
    kbRecords: await bus.keyValue({ bucket: 'test_kbs', retention: 'keep' }),
    keys: keyStoreOf(keys),
    logger: options.logger ?? createLogger('answer-gateway', { level: 'silent' }),
    metrics: options.metrics ?? createMetrics('answer-gateway', { defaultMetrics: false }),
    ...(options.cache ? { cache: options.cache } : {}),
  });
  return {
    gateway,
    baseUrl: `http://127.0.0.1:${gateway.httpPort}`,
    grpcAddress: `127.0.0.1:${gateway.grpcPort}`,
  };
}

/** A gateway on the memory bus with a fake hop-reasoner, on free ports, stopped on dispose. */
export async function startTestGateway(options: TestGatewayOptions = {}): Promise<TestGateway> {
  const broker = createMemoryBroker();
  const bus = broker.connect();
  const peerBus = broker.connect();
  const keys = options.keys ?? testKeys();
  const reasoner = await FakeReasoner.start(peerBus, options.script ?? twoHopScript());
  const traces = await peerBus.keyValue();
  const metrics = createMetrics('answer-gateway', { defaultMetrics: false });
  const { gateway, baseUrl, grpcAddress } = await startGatewayOn(bus, keys, {
    metrics,
    ...(options.config ? { config: options.config } : {}),
    ...(options.cache ? { cache: options.cache } : {}),
    ...(options.logger ? { logger: options.logger } : {}),
  });
  return {
    gateway,
    bus,
    peerBus,
    reasoner,
    traces,
    keys,
    metrics,
    baseUrl,
    grpcAddress,
    async [Symbol.asyncDispose]() {
      reasoner.releaseAll();
      await gateway.stop({ graceMs: 0 });
      await reasoner.stop();
      await bus.drain();
      await peerBus.drain();
    },
  };
}

export interface SseEvent {
  id: number;
  name: string;
  data: Record<string, unknown>;
}

export interface SseConnection {
  response: Response;
  events: SseEvent[];
  /** Comment lines (heartbeats) seen so far. */
  comments: number;
  /** Resolves when the server ends the stream (or the client aborted it). */
  ended: Promise<void>;
  abort(): void;
}

/** Opens an SSE request and collects its events as they arrive. */
export async function openSse(
  url: string,
  init: RequestInit & { headers?: Record<string, string> },
): Promise<SseConnection> {
  const controller = new AbortController();
  const response = await fetch(url, {
    ...init,
    headers: { Accept: 'text/event-stream', ...init.headers },
    signal: controller.signal,
  });
  const connection: SseConnection = {
    response,
    events: [],
    comments: 0,
    ended: Promise.resolve(),
    abort: () => controller.abort(),
  };
  if (!response.ok || !response.body) return connection;
  const body = response.body;
  connection.ended = (async () => {
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for await (const bytes of body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(bytes, { stream: true });
        let boundary: number;
        while ((boundary = buffer.indexOf('\n\n')) >= 0) {
          const frame = buffer.slice(0, boundary);
          buffer = buffer.slice(boundary + 2);
          const fields = new Map<string, string>();
          for (const line of frame.split('\n')) {
            if (line.startsWith(':')) connection.comments += 1;
            const colon = line.indexOf(':');
            if (colon > 0) fields.set(line.slice(0, colon), line.slice(colon + 1).trimStart());
          }
          const data = fields.get('data');
          if (data !== undefined) {
            connection.events.push({
              id: Number(fields.get('id')),
              name: fields.get('event') ?? 'message',
              data: JSON.parse(data) as Record<string, unknown>,
            });
          }
        }
      }
    } catch (error) {
      if (!controller.signal.aborted) throw error;
    }
  })();
  return connection;
}

export const bearer = (key: TestKey) => ({ Authorization: `Bearer ${key.key}` });

export function askSse(baseUrl: string, key: TestKey, body: unknown): Promise<SseConnection> {
  return openSse(`${baseUrl}/v1/ask`, {
    method: 'POST',
    headers: { ...bearer(key), 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
}

export function askJson(
  baseUrl: string,
  key: TestKey | undefined,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<Response> {
  return fetch(`${baseUrl}/v1/ask`, {
    method: 'POST',
    headers: { ...(key ? bearer(key) : {}), 'Content-Type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

/** The value of one labelled series of a counter or gauge. */
export async function metricValue(
  metrics: HoplineMetrics,
  name: string,
  labels: Record<string, string> = {},
): Promise<number> {
  const metric = metrics.registry.getSingleMetric(name);
  if (!metric) throw new Error(`no metric ${name}`);
  const { values } = await metric.get();
  const series = values.find((value) =>
    Object.entries(labels).every(([key, expected]) => value.labels[key] === expected),
  );
  return series?.value ?? 0;
}
