import { env, grpcTlsEnv, jetstreamEnv, natsSecurityEnv, serviceEnv } from '@hopline/config';
import { z } from 'zod';

export const configSchema = z.object({
  ...serviceEnv,
  ...jetstreamEnv,
  NATS_URL: env.endpoints('NATS_USER and NATS_PASSWORD (or NATS_CREDS, NATS_TOKEN)').default('nats://127.0.0.1:4222'),
  ...natsSecurityEnv,
  QUERY_UNDERSTANDING_ADDRESS: env.string('127.0.0.1:50061'),
  RERANKER_ADDRESS: env.string('127.0.0.1:50062'),
  /** This service's certificate for mutual TLS to query-understanding and the reranker. */
  ...grpcTlsEnv,
  /** OpenAI-compatible chat endpoint; without it the offline reasoner answers. */
  OPENAI_BASE_URL: env.endpoint('OPENAI_API_KEY').optional(),
  OPENAI_API_KEY: z.string().optional(),
  CHAT_MODEL: env.string('gpt-4o-mini'),
  MAX_HOPS: z.coerce.number().int().min(1).max(5).default(3),
  /**
   * Search for the question itself while query-understanding analyses it, for the first hop to
   * take (not in the embedded mode, whose analysis is no round trip): one round trip less on most
   * questions, one search spent on those the analysis splits or rewrites.
   */
  EARLY_FIRST_RETRIEVAL: env.boolean(true),
  TOP_K: env.positiveInt(10),
  LLM_CALL_BUDGET: env.positiveInt(12),
  LLM_TOKEN_BUDGET: env.positiveInt(20_000),
  /** Questions one instance runs at once; more wait in the question queue for a free instance. */
  MAX_CONCURRENT_QUESTIONS: env.positiveInt(32),
  /**
   * Stage budgets: the longest one call of the stage may take, whatever is left of the
   * question's deadline (it gets the smaller of the two). A retrieval's budget covers its hedge
   * on a second worker; a model call's covers one request, retries aside.
   */
  ANALYZE_BUDGET_MS: env.positiveInt(5_000),
  RETRIEVE_BUDGET_MS: env.positiveInt(2_500),
  RERANK_BUDGET_MS: env.positiveInt(1_500),
  MODEL_CALL_BUDGET_MS: env.positiveInt(20_000),
  /** How long a downstream's open breaker fails fast before it lets one trial call through. */
  BREAKER_RESET_MS: env.positiveInt(1_000),
  /**
   * How long a question stays with an instance that stopped marking progress (crashed, killed,
   * cut off from NATS) before another takes it over; progress is marked every third of it. Set
   * the same on every instance: they share one consumer.
   */
  QUESTION_LEASE_MS: env.positiveInt(3_000),
});

export type Config = z.infer<typeof configSchema>;
