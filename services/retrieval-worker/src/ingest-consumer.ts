import type { Bus, DurableConsumer, DurableStream, Settlement, StreamMessage } from '@hopline/bus';
import {
  codecs,
  DOCUMENT_BODY_PART_BYTES,
  headers,
  subjects,
  toHoplineError,
  type IngestCommand__Output,
} from '@hopline/contracts';
import type { IndexAttempt, Indexer } from '@hopline/retrieval';
import type { HoplineMetrics, Logger } from '@hopline/telemetry';
import { BodyBudget } from './body-budget.js';
import { CommandBatcher } from './command-batcher.js';
import { withDocumentBody } from './document-body.js';

export interface IngestConsumerDeps {
  bus: Bus;
  stream: DurableStream;
  /** Where bodies too large for one message are read from (see Document.body_id). */
  bodies: DurableStream;
  /** Where permanently failed commands are kept, with the reason. */
  deadLetters: DurableStream;
  indexer: Indexer;
  logger: Pick<Logger, 'info' | 'warn' | 'error'>;
  metrics: Pick<HoplineMetrics, 'ingestDeadLetters'>;
  /** The durable consumer's name: workers sharing it split the stream. */
  durable: string;
  /** Deliveries after which a command that failed for a reason retrying cannot fix is dead-lettered (default 8). */
  maxDeliver?: number;
  /**
   * Deliveries after which a command that failed for a reason that passes (an index or the
   * embedder unavailable, a timeout, a breaker open) is dead-lettered (default 128: about an
   * hour of retries, 30 s apart once the backoff is at its longest).
   */
  maxRetryableDeliver?: number;
  ackWaitMs?: number;
  /** The server deletes the consumer after no worker used it for this long. */
  inactiveThresholdMs?: number;
  /** Reads the stream from its first message, whatever position the durable kept (see DurableConsumerOptions). */
  fromStart?: boolean;
  /** Commands fetched and applied together (default 256): one index write and log flush each. */
  batchSize?: number;
  /** Bytes of document bodies read back from their parts and held at once (default 256 MiB). */
  bodyBudgetBytes?: number;
}

const DEFAULT_BATCH_SIZE = 256;
const DEFAULT_BODY_BUDGET_BYTES = 256 * 1024 * 1024;
const BASE_RETRY_MS = 500;
const MAX_RETRY_MS = 30_000;

/**
 * Applies the durable ingest stream to the indexes, in batches of the deliveries fetched
 * together. A command is acked only after both indexes took the batch that holds it; a failed
 * one is retried with exponential backoff, alone (a command that fails every time fails no
 * other with it). A permanent failure (a malformed or invalid command, or one that exhausted its
 * deliveries) is terminated and published on the dead-letter subject with the reason, so nothing
 * is dropped silently. An outage of an index or the embedder exhausts nothing for about an
 * hour: dead-lettered then, a command may be applied on one side only, which only its being
 * ingested again mends (see the runbook).
 */
const DEAD_LETTER_CAUSES = ['malformed', 'invalid', 'exhausted'] as const;

export async function startIngestConsumer(deps: IngestConsumerDeps): Promise<DurableConsumer> {
  const maxDeliver = deps.maxDeliver ?? 8;
  const maxRetryableDeliver = deps.maxRetryableDeliver ?? 128;
  const batchSize = deps.batchSize ?? DEFAULT_BATCH_SIZE;
  const bodyBudget = new BodyBudget(deps.bodyBudgetBytes ?? DEFAULT_BODY_BUDGET_BYTES);
  const batcher = new CommandBatcher(deps.indexer, batchSize, (attempts) => {
    let applied = 0;
    let chunks = 0;
    for (const attempt of attempts) {
      if (!attempt.ok || !attempt.result.changed) continue;
      applied++;
      chunks += attempt.result.chunks;
    }
    deps.logger.info('ingest batch applied', { commands: attempts.length, changed: applied, chunks });
  });
  // Each cause starts at zero, so that the first dead letter shows in increase() and the alert's series exist.
  for (const cause of DEAD_LETTER_CAUSES) deps.metrics.ingestDeadLetters.inc({ cause }, 0);
  const deadLetter = async (
    message: StreamMessage,
    command: IngestCommand__Output | null,
    cause: (typeof DEAD_LETTER_CAUSES)[number],
    reason: string,
  ): Promise<Settlement> => {
    deps.metrics.ingestDeadLetters.inc({ cause });
    await deps.deadLetters.publish(
      subjects.deadLetter,
      codecs.deadLetter.encode({
        ...(command ? { command } : {}),
        reason,
        originalSubject: message.subject,
        deliveries: message.deliveryCount,
      }),
      { msgId: `dead:${message.headers[headers.msgId] ?? `${message.subject}:${Date.now()}`}` },
    );
    deps.logger.error('ingest command dead-lettered', {
      subject: message.subject,
      reason,
      deliveries: message.deliveryCount,
    });
    return { kind: 'terminate', reason };
  };

  return deps.stream.consume(
    // The stream may deliver twice more than the handler tries, so that a dead letter that
    // failed to publish on the last try is published on the next one instead of being lost.
    {
      durable: deps.durable,
      filterSubject: subjects.ingestAll,
      maxDeliver: Math.max(maxDeliver, maxRetryableDeliver) + 2,
      ackWaitMs: deps.ackWaitMs ?? 60_000,
      // A delivery waits for its whole batch: the ack wait bounds a dead worker, not a batch.
      keepAlive: true,
      maxInFlight: batchSize,
      ...(deps.inactiveThresholdMs === undefined ? {} : { inactiveThresholdMs: deps.inactiveThresholdMs }),
      ...(deps.fromStart ? { fromStart: true } : {}),
    },
    async (message) => {
      let command: IngestCommand__Output;
      try {
        command = codecs.ingestCommand.decode(message.data);
      } catch (error) {
        return deadLetter(message, null, 'malformed', (error as Error).message);
      }
      // A body in parts is held, joined, until its batch is applied: within the budget.
      const bodyParts = command.upsert?.bodyParts ?? 0;
      const release = bodyParts > 0 ? await bodyBudget.take(bodyParts * DOCUMENT_BODY_PART_BYTES) : undefined;
      const attempt = await withDocumentBody(deps.bodies, command)
        .then(
          // A redelivery goes alone: in a batch, a command that fails every time would fail the others.
          (complete) => batcher.apply(complete, { alone: message.deliveryCount > 1 }),
          (error: unknown): IndexAttempt => ({ ok: false, error }),
        )
        .finally(release);
      try {
        if (!attempt.ok) throw attempt.error;
        const result = attempt.result;
        // A redelivery may follow a crash between indexing and this announcement: announce
        // again, since a second version bump of the kb's caches is harmless.
        if (result.changed || message.deliveryCount > 1) {
          deps.bus.publish(
            subjects.kbChanged(result.doc.tenantId, result.doc.kbId),
            codecs.kbChanged.encode({
              tenantId: result.doc.tenantId,
              kbId: result.doc.kbId,
              docId: result.doc.docId,
              docVersion: result.doc.version,
            }),
          );
        }
        return { kind: 'ack' };
      } catch (thrown) {
        const error = toHoplineError(thrown);
        if (error.code === 'invalid_argument') return deadLetter(message, command, 'invalid', error.message);
        if (message.deliveryCount >= (error.retryable ? maxRetryableDeliver : maxDeliver))
          return deadLetter(
            message,
            command,
            'exhausted',
            `gave up after ${message.deliveryCount} deliveries: ${error.message}`,
          );
        const delayMs = Math.min(MAX_RETRY_MS, BASE_RETRY_MS * 2 ** (message.deliveryCount - 1));
        deps.logger.warn('ingest command failed; retrying', {
          subject: message.subject,
          deliveries: message.deliveryCount,
          delayMs,
          error,
        });
        return { kind: 'retry', delayMs };
      }
    },
  );
}
