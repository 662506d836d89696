import { env, jetstreamEnv, serviceEnv } from '@hopline/config';
import { z } from 'zod';

export const configSchema = z.object({
  ...serviceEnv,
  ...jetstreamEnv,
  NATS_URL: env.url().default('nats://127.0.0.1:4222'),
  QUERY_UNDERSTANDING_ADDRESS: env.string('127.0.0.1:50061'),
  RERANKER_ADDRESS: env.string('127.0.0.1:50062'),
  /** OpenAI-compatible chat endpoint; without it the offline reasoner answers. */
  OPENAI_BASE_URL: env.url().optional(),
  OPENAI_API_KEY: z.string().optional(),
  CHAT_MODEL: env.string('gpt-4o-mini'),
  MAX_HOPS: z.coerce.number().int().min(1).max(5).default(3),
  TOP_K: env.positiveInt(10),
  LLM_CALL_BUDGET: env.positiveInt(12),
  LLM_TOKEN_BUDGET: env.positiveInt(20_000),
  /** Questions one instance runs at once; more wait in NATS. */
  MAX_CONCURRENT_QUESTIONS: env.positiveInt(32),
});

export type Config = z.infer<typeof configSchema>;
