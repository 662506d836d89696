import { env, grpcTlsEnv, serviceEnv } from '@hopline/config';
import { DEFAULT_RERANK_MAX_BATCH } from '@hopline/retrieval';
import { z } from 'zod';

export const configSchema = z.object({
  ...serviceEnv,
  GRPC_HOST: env.string('0.0.0.0'),
  ...grpcTlsEnv,
  GRPC_PORT: env.port(50062),
  /** TEI/Cohere-style cross-encoder /rerank endpoint; without it the lexical scorer ranks. */
  RERANK_URL: env.endpoint('RERANK_API_KEY').optional(),
  /** Request/response shape of RERANK_URL: Hugging Face TEI or Cohere-style. */
  RERANK_API: z.enum(['tei', 'cohere']).default('tei'),
  RERANK_API_KEY: z.string().optional(),
  RERANK_MODEL: z.string().optional(),
  /** Texts in one request to RERANK_URL, at most the server's cap (TEI's `--max-client-batch-size`); more go in several. */
  RERANK_MAX_BATCH: env.positiveInt(DEFAULT_RERANK_MAX_BATCH),
  RERANK_KEEP: env.positiveInt(8),
  MMR_KEEP: env.positiveInt(6),
  MMR_LAMBDA: z.coerce.number().min(0).max(1).default(0.7),
  TOKEN_BUDGET: env.positiveInt(3000),
});

export type Config = z.infer<typeof configSchema>;
