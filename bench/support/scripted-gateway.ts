// A gateway over the memory bus with a hop-reasoner stand-in whose events the bench scripts:
// what the gateway benches measure is the gateway alone, so every question's events come at
// once from `script`, and nothing else in the system costs anything.
import type { ApiKeyStore } from '@hopline/answer-gateway';
import { configSchema, startAnswerGateway, type AnswerGateway, type Config } from '@hopline/answer-gateway';
import { createMemoryBroker } from '@hopline/bus';
import { codecs, jetstream } from '@hopline/contracts';
import { openQuestionStreams, type EventBody } from '@hopline/questions';
import { createLogger, createMetrics } from '@hopline/telemetry';

/** Writes one question's events; resolves once the question is to be acknowledged. */
export type QuestionScript = (write: (body: EventBody) => Promise<unknown>) => Promise<void>;

export interface ScriptedGateway {
  gateway: AnswerGateway;
  url: string;
  /** Stops the gateway (running questions get `graceMs`) and closes both bus connections. */
  stop(graceMs: number): Promise<void>;
}

export async function startScriptedGateway(options: {
  script: QuestionScript;
  keys: ApiKeyStore;
  config: Partial<Config>;
}): Promise<ScriptedGateway> {
  const broker = createMemoryBroker();
  const bus = broker.connect();
  const reasonerBus = broker.connect();
  const reasonerStreams = await openQuestionStreams(reasonerBus);
  await reasonerStreams.queue.take({ capacity: 1_000, leaseMs: 60_000 }, async (job) => {
    const ctx = codecs.askCommand.decode(job.data).ctx;
    const writer = reasonerStreams.log.writer(
      ctx?.questionId ?? '',
      {
        tenantId: ctx?.scope?.tenantId ?? '',
        userId: ctx?.scope?.userId ?? '',
        kbIds: ctx?.scope?.kbIds ?? [],
        deadlineUnixMs: 0,
      },
      1,
    );
    await options.script((body) => writer.append(body, 0));
    return { kind: 'ack' };
  });
  const gateway = await startAnswerGateway({
    config: {
      ...configSchema.parse({}),
      HTTP_HOST: '127.0.0.1',
      HTTP_PORT: 0,
      GRPC_HOST: '127.0.0.1',
      GRPC_PORT: 0,
      RATE_BURST_PER_KEY: 1e9,
      RATE_PER_KEY_PER_SECOND: 1e9,
      ...options.config,
    },
    bus,
    questions: await openQuestionStreams(bus),
    ingest: await bus.durableStream(),
    traces: await bus.keyValue(),
    kbRecords: await bus.keyValue({ bucket: jetstream.kbBucket, retention: 'keep' }),
    keys: options.keys,
    logger: createLogger('answer-gateway', { level: 'silent' }),
    metrics: createMetrics('answer-gateway', { defaultMetrics: false }),
  });
  return {
    gateway,
    url: `http://127.0.0.1:${gateway.httpPort}`,
    async stop(graceMs) {
      await gateway.stop({ graceMs });
      await bus.drain();
      await reasonerBus.drain();
    },
  };
}
