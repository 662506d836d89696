import { describe, expect, it } from 'vitest';
import { createMemoryBroker, type DurableStream } from '@hopline/bus';
import {
  codecs,
  DOCUMENT_BODY_PART_BYTES,
  documentBodyStream,
  jetstream,
  subjects,
  UnavailableError,
  type IngestCommand__Output,
} from '@hopline/contracts';
import type { IndexAttempt, Indexer, IndexResult } from '@hopline/retrieval';
import { createLogger, createMetrics } from '@hopline/telemetry';
import { waitFor } from '@hopline/test-support';
import { startIngestConsumer } from '../src/ingest-consumer.js';

const logger = createLogger('ingest-consumer-test', { level: 'silent' });
const metrics = createMetrics('ingest-consumer-test', { defaultMetrics: false });
const doc = { tenantId: 'acme', kbId: 'kb', docId: 'atlas', version: 1 };

/** An indexer that applies a batch's commands one by one with `apply`, and records the batches. */
function indexerOf(apply: (command: IngestCommand__Output) => Promise<IndexResult>, batches: number[] = []): Indexer {
  return {
    apply,
    applyAll: (commands) => {
      batches.push(commands.length);
      return Promise.all(
        commands.map((command) =>
          apply(command).then(
            (result): IndexAttempt => ({ ok: true, result }),
            (error: unknown): IndexAttempt => ({ ok: false, error }),
          ),
        ),
      );
    },
    checkConsistency: async () => ({ consistent: true, kbs: [], gaps: [], messages: [] }),
    repair: async (report) => ({ written: 0, report }),
  };
}

const unchanged: IndexResult = {
  op: 'upsert',
  doc,
  lexical: 'unchanged',
  vector: 'unchanged',
  chunks: 0,
  changed: false,
};

async function setUp(
  indexer: Indexer,
  deadLetters?: (real: DurableStream) => DurableStream,
  before?: (stream: DurableStream) => Promise<void>,
  maxRetryableDeliver = 2,
) {
  const bus = createMemoryBroker().connect();
  const stream = await bus.durableStream();
  await before?.(stream);
  const realDeadLetters = await bus.durableStream({
    name: jetstream.deadLetterStream,
    subjects: [subjects.deadLetter],
  });
  const consumer = await startIngestConsumer({
    bus,
    stream,
    bodies: await bus.durableStream(documentBodyStream),
    deadLetters: deadLetters ? deadLetters(realDeadLetters) : realDeadLetters,
    indexer,
    logger,
    metrics,
    durable: 'test',
    maxDeliver: 2,
    maxRetryableDeliver,
    ackWaitMs: 100,
  });
  await stream.publish(
    subjects.ingest('acme', 'kb'),
    codecs.ingestCommand.encode({ upsert: { ...doc, title: 'Atlas', text: 'Atlas.' } }),
    { msgId: 'atlas:1' },
  );
  return { bus, consumer, realDeadLetters };
}

/** Upserts of `count` documents doc-0, doc-1, …, stored on the ingest stream before the consumer starts. */
async function publishDocuments(stream: DurableStream, count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    await stream.publish(
      subjects.ingest('acme', 'kb'),
      codecs.ingestCommand.encode({ upsert: { ...doc, docId: `doc-${i}`, title: 'T', text: 'Text.' } }),
      { msgId: `doc-${i}:1` },
    );
  }
}

/** The reasons of the dead letters published on `deadLetters`, as they come. */
async function deadLetterReasons(deadLetters: DurableStream) {
  const reasons: string[] = [];
  const reader = await deadLetters.consume(
    { durable: 'reader', filterSubject: subjects.deadLetter, maxDeliver: 1, ackWaitMs: 1_000 },
    async (message) => {
      reasons.push(codecs.deadLetter.decode(message.data).reason);
      return { kind: 'ack' };
    },
  );
  return { reasons, reader };
}

describe('ingest consumer', () => {
  it('ingestion - a dead letter that fails to publish on the last try is published on a later delivery, not lost', async () => {
    let failures = 0;
    const { bus, consumer, realDeadLetters } = await setUp(
      indexerOf(async () => Promise.reject(new UnavailableError('index down'))),
      (real) => ({
        ...real,
        publish: async (...args) => {
          if (failures++ === 0) throw new UnavailableError('dead-letter stream down');
          return real.publish(...args);
        },
      }),
    );
    const { reasons, reader } = await deadLetterReasons(realDeadLetters);
    await waitFor(() => reasons.length === 1, { timeoutMs: 10_000, description: 'the dead letter' });
    expect(reasons[0]).toMatch(/gave up after \d deliveries: index down/);
    await consumer.stop();
    await reader.stop();
    await bus.drain();
  });

  it('ingestion - a redelivered command announces its kb change even when the indexes already hold it', async () => {
    let calls = 0;
    const { bus, consumer } = await setUp(
      indexerOf(async () => {
        calls += 1;
        // The first delivery dies after indexing, before its announcement and ack.
        if (calls === 1) throw new UnavailableError('worker died after indexing');
        return unchanged;
      }),
    );
    const changed: string[] = [];
    bus.subscribe(
      subjects.kbChangedAll,
      {},
      (message) => void changed.push(codecs.kbChanged.decode(message.data).kbId),
    );
    await waitFor(() => changed.length === 1, { timeoutMs: 5_000, description: 'the kb change announcement' });
    expect(changed).toEqual(['kb']);
    await consumer.stop();
    await bus.drain();
  });

  it('ingestion - an index or embedder unavailable is retried past the deliveries another failure gets, not dead-lettered half-applied within a minute', async () => {
    let calls = 0;
    const retried = await setUp(
      indexerOf(async () => {
        calls += 1;
        if (calls <= 3) throw new UnavailableError('vector index down');
        return unchanged;
      }),
      undefined,
      undefined,
      6,
    );
    const retriedLetters = await deadLetterReasons(retried.realDeadLetters);
    await waitFor(async () => (await retried.consumer.progress()).lag === 0, {
      timeoutMs: 10_000,
      description: 'the command applied on its fourth delivery and acked',
    });
    expect(calls).toBe(4);
    expect(retriedLetters.reasons).toEqual([]);
    await retried.consumer.stop();
    await retriedLetters.reader.stop();
    await retried.bus.drain();

    // A failure that trying again does not mend gets the shorter budget.
    const broken = await setUp(
      indexerOf(async () => Promise.reject(new Error('a defect in the indexer'))),
      undefined,
      undefined,
      6,
    );
    const brokenLetters = await deadLetterReasons(broken.realDeadLetters);
    await waitFor(() => brokenLetters.reasons.length === 1, { timeoutMs: 10_000, description: 'the dead letter' });
    expect(brokenLetters.reasons[0]).toBe('gave up after 2 deliveries: a defect in the indexer');
    await broken.consumer.stop();
    await brokenLetters.reader.stop();
    await broken.bus.drain();
  });

  it('ingestion - a redelivered command is applied alone: one that fails every time no longer fails the commands fetched with it', async () => {
    const applied = new Set<string>();
    const batches: number[] = [];
    // An index write fails as a whole: a batch holding the document that always fails fails every command in it.
    const indexer: Indexer = {
      ...indexerOf(async () => unchanged),
      applyAll: async (commands) => {
        batches.push(commands.length);
        const poisoned = commands.some((command) => command.upsert?.docId === 'atlas');
        if (!poisoned) for (const command of commands) applied.add(command.upsert?.docId ?? '');
        return commands.map((): IndexAttempt =>
          poisoned ? { ok: false, error: new UnavailableError('write timed out') } : { ok: true, result: unchanged },
        );
      },
    };
    const { bus, consumer } = await setUp(indexer, undefined, (stream) => publishDocuments(stream, 20), 100);
    await waitFor(() => applied.size === 20, { timeoutMs: 10_000, description: 'every other command applied' });
    expect(applied.has('atlas')).toBe(false);
    expect(Math.max(...batches)).toBeGreaterThan(1);
    await consumer.stop();
    await bus.drain();
  });

  it('ingestion - the deliveries fetched together are applied as one batch, and each is acked after it', async () => {
    const batches: number[] = [];
    const applied: string[] = [];
    const { bus, consumer } = await setUp(
      indexerOf(async (command) => {
        applied.push(command.upsert?.docId ?? '');
        return unchanged;
      }, batches),
      undefined,
      (stream) => publishDocuments(stream, 40),
    );
    await waitFor(() => applied.length === 41, { timeoutMs: 5_000, description: 'every command applied' });
    expect(batches.reduce((sum, size) => sum + size, 0)).toBe(41);
    expect(Math.max(...batches)).toBeGreaterThan(1);
    await waitFor(async () => (await consumer.progress()).lag === 0, {
      timeoutMs: 5_000,
      description: 'every delivery acked',
    });
    await consumer.stop();
    await bus.drain();
  });

  it('ingestion - large bodies read back from their parts are held within the body budget: those past it wait for the batches before them', async () => {
    const bus = createMemoryBroker().connect();
    const stream = await bus.durableStream();
    const bodies = await bus.durableStream(documentBodyStream);
    // Six documents of three parts each; the budget holds two of them (three parts count as 1.5 MiB).
    for (let i = 0; i < 6; i++) {
      for (let part = 0; part < 3; part++) {
        await bodies.publish(
          subjects.documentBody('acme', 'kb', `body-${i}`),
          new TextEncoder().encode(`d${i}p${part} `),
          {
            msgId: `body-${i}:${part}`,
          },
        );
      }
      await stream.publish(
        subjects.ingest('acme', 'kb'),
        codecs.ingestCommand.encode({
          upsert: { ...doc, docId: `doc-${i}`, title: 'T', text: '', bodyParts: 3, bodyId: `body-${i}` },
        }),
        { msgId: `doc-${i}:1` },
      );
    }
    const batches: string[][] = [];
    const indexer = indexerOf(async () => unchanged);
    const consumer = await startIngestConsumer({
      bus,
      stream,
      bodies,
      deadLetters: await bus.durableStream({ name: jetstream.deadLetterStream, subjects: [subjects.deadLetter] }),
      indexer: {
        ...indexer,
        applyAll: (commands) => {
          batches.push(commands.map((command) => command.upsert?.text ?? ''));
          return indexer.applyAll(commands);
        },
      },
      logger,
      metrics,
      durable: 'test',
      ackWaitMs: 1_000,
      bodyBudgetBytes: 2 * 3 * DOCUMENT_BODY_PART_BYTES,
    });
    try {
      await waitFor(() => batches.flat().length === 6, { timeoutMs: 5_000, description: 'every document applied' });
      expect(batches.flat().sort()).toEqual(Array.from({ length: 6 }, (_, i) => `d${i}p0 d${i}p1 d${i}p2 `));
      expect(Math.max(...batches.map((batch) => batch.length))).toBe(2);
    } finally {
      await consumer.stop();
      await bus.drain();
    }
  });
});
