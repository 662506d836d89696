import { env, jetstreamEnv, natsSecurityEnv, serviceEnv } from '@hopline/config';
import { FUSION_METHODS } from '@hopline/retrieval';
import { z } from 'zod';

export const configSchema = z.object({
  ...serviceEnv,
  ...jetstreamEnv,
  NATS_URL: env.endpoints('NATS_USER and NATS_PASSWORD (or NATS_CREDS, NATS_TOKEN)').default('nats://127.0.0.1:4222'),
  ...natsSecurityEnv,
  /**
   * Names this worker in responses, logs and its own retrieve subject; with the embedded indexes
   * it also names the worker's own ingest consumer. Unset, the worker makes one (host name and
   * a random suffix) and keeps it in DATA_DIR, so that each worker, on one host or not, has its
   * own and keeps it across restarts.
   */
  WORKER_ID: z.string().min(1).optional(),
  /** Where the embedded indexes and the worker's identity persist. */
  DATA_DIR: env.string('.data/retrieval'),
  /** A worker's own ingest consumer that no worker used for this long is deleted by JetStream. */
  INGEST_CONSUMER_INACTIVE_HOURS: z.coerce.number().positive().default(24),
  /**
   * Ingest commands fetched and applied together: one embedding pass and one write per index
   * (one log flush embedded, a few bulk requests remote) for the whole batch.
   */
  INGEST_BATCH_SIZE: env.positiveInt(256),
  /**
   * Bytes of large documents' bodies (read back from their parts) a worker holds at once while
   * their batches are applied; a body that does not fit waits for those before it.
   */
  INGEST_BODY_BUDGET_BYTES: env.positiveInt(256 * 1024 * 1024),
  /** Switches BM25 to Elasticsearch. */
  ELASTICSEARCH_URL: env.url().optional(),
  /** The chunks index (its document records go to `<index>-documents`); created at start-up. */
  ELASTICSEARCH_INDEX: env.string('hopline-chunks'),
  /** Most actions in one `_bulk` request of a batch; a larger batch is split. */
  ELASTICSEARCH_BULK_MAX_OPERATIONS: env.positiveInt(1_000),
  /**
   * Most bytes of one `_bulk` request body (default 5 MiB); a larger batch is split. At most
   * Elasticsearch's own default `http.max_content_length` (100 MiB), past which it refuses a body.
   */
  ELASTICSEARCH_BULK_MAX_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .max(100 * 1024 * 1024)
    .default(5 * 1024 * 1024),
  /**
   * How often a worker over Elasticsearch reads the document records other workers wrote, to
   * relink them in its entity graph (see docs/architecture.md, the entity graph).
   */
  ELASTICSEARCH_GRAPH_SYNC_MS: env.positiveInt(2_000),
  /** Switches vector search to Milvus (host:port). */
  MILVUS_ADDRESS: z.string().min(1).optional(),
  /** `user:password` or an API key, when Milvus has authentication on. */
  MILVUS_TOKEN: z.string().min(1).optional(),
  /** The vectors collection (document records go to `<collection>_documents`); created at start-up. */
  MILVUS_COLLECTION: z
    .string()
    .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'letters, digits and underscores, not starting with a digit')
    .default('hopline_chunks'),
  /** Most rows in one Milvus upsert request of a batch; a larger batch is split. */
  MILVUS_UPSERT_BATCH: env.positiveInt(256),
  /** OpenAI-compatible /embeddings endpoint; without it a hashing embedder runs offline. */
  OPENAI_BASE_URL: env.endpoint('OPENAI_API_KEY').optional(),
  OPENAI_API_KEY: z.string().optional(),
  EMBEDDING_MODEL: env.string('text-embedding-3-small'),
  /** Vector length EMBEDDING_MODEL returns (1536 for text-embedding-3-small); indexes are sized by it. */
  EMBEDDING_DIMENSIONS: env.positiveInt(1536),
  BM25_K1: z.coerce.number().positive().default(1.5),
  BM25_B: z.coerce.number().min(0).max(1).default(0.75),
  /**
   * How the two paths' lists are fused: `rrf` or `relative-score`. Unset, the embedder decides:
   * RRF for an OpenAI-compatible model, relative-score for the offline hashing embedder (see
   * `HashingEmbedder.fusion` for the measurements).
   */
  FUSION_METHOD: z.enum(FUSION_METHODS).optional(),
  RRF_K: env.positiveInt(60),
  RRF_WEIGHT_BM25: z.coerce.number().nonnegative().default(1),
  /** Unset, the embedder decides: 1 for an OpenAI-compatible model, 0.1 for the hashing embedder. */
  RRF_WEIGHT_VECTOR: z.coerce.number().nonnegative().optional(),
  BM25_CANDIDATES: env.positiveInt(50),
  VECTOR_CANDIDATES: env.positiveInt(50),
  FUSED_KEEP: env.positiveInt(30),
});

export type Config = z.infer<typeof configSchema>;
