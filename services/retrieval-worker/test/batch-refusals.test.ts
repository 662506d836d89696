import { describe, expect, it } from 'vitest';
import { createMemoryBroker } from '@hopline/bus';
import { codecs, documentBodyStream, jetstream, subjects, ValidationError } from '@hopline/contracts';
import {
  createIndexer,
  EmbeddedLexicalBackend,
  EmbeddedVectorBackend,
  HashingEmbedder,
  type Embedder,
} from '@hopline/retrieval';
import { createLogger, createMetrics } from '@hopline/telemetry';
import { waitFor } from '@hopline/test-support';
import { startIngestConsumer } from '../src/ingest-consumer.js';

const logger = createLogger('batch-refusals-test', { level: 'silent' });
const metrics = createMetrics('batch-refusals-test', { defaultMetrics: false });

describe('retrieval-worker: one document refused in a batch', () => {
  it('ingest - only the document the embedder refuses is dead-lettered; the others fetched with it are indexed', async () => {
    const hashing = new HashingEmbedder({ dimensions: 32 });
    const embedder: Embedder = {
      model: hashing.model,
      dimensions: hashing.dimensions,
      embed: async (texts, signal) => {
        if (texts.some((text) => text.includes('POISON')))
          throw new ValidationError('embedding server answered 400: maximum context length exceeded');
        return hashing.embed(texts, signal);
      },
    };
    const lexical = await EmbeddedLexicalBackend.open();
    const vector = await EmbeddedVectorBackend.open({ dimensions: 32 });
    const indexer = createIndexer({ lexical, vector, embedder });

    const bus = createMemoryBroker().connect();
    const stream = await bus.durableStream();
    const count = 20;
    for (let i = 0; i < count; i++) {
      const text = i === 7 ? 'POISON text the model cannot take.' : `Document ${i} about harbours.`;
      await stream.publish(
        subjects.ingest('acme', 'kb'),
        codecs.ingestCommand.encode({
          upsert: { tenantId: 'acme', kbId: 'kb', docId: `doc-${i}`, version: 1, title: 'T', text },
        }),
        { msgId: `doc-${i}:1` },
      );
    }
    const deadLetters = await bus.durableStream({ name: jetstream.deadLetterStream, subjects: [subjects.deadLetter] });
    const dead: string[] = [];
    const reader = await deadLetters.consume(
      { durable: 'reader', filterSubject: subjects.deadLetter, maxDeliver: 1, ackWaitMs: 1_000 },
      async (message) => {
        dead.push(codecs.deadLetter.decode(message.data).command?.upsert?.docId ?? '?');
        return { kind: 'ack' };
      },
    );
    const consumer = await startIngestConsumer({
      bus,
      stream,
      bodies: await bus.durableStream(documentBodyStream),
      deadLetters,
      indexer,
      logger,
      metrics,
      durable: 'test',
      maxDeliver: 2,
      maxRetryableDeliver: 2,
      ackWaitMs: 1_000,
    });
    try {
      await waitFor(async () => (await consumer.progress()).lag === 0, {
        timeoutMs: 10_000,
        description: 'every command settled',
      });
      await waitFor(() => dead.length > 0, { timeoutMs: 5_000, description: 'a dead letter read' });
      await new Promise((resolve) => setTimeout(resolve, 500));
      const indexed = (await lexical.countChunks()).find((kb) => kb.kbId === 'kb')?.documents ?? 0;
      expect({ dead: [...dead].sort(), indexed }).toEqual({ dead: ['doc-7'], indexed: count - 1 });
    } finally {
      await consumer.stop();
      await reader.stop();
      await bus.drain();
    }
  }, 20_000);
});
