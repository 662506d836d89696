import { env, serviceEnv } from '@hopline/config';
import { z } from 'zod';

export const configSchema = z.object({
  ...serviceEnv,
  NATS_URL: env.url().default('nats://127.0.0.1:4222'),
  HTTP_HOST: env.string('0.0.0.0'),
  HTTP_PORT: env.port(8080),
  GRPC_HOST: env.string('0.0.0.0'),
  GRPC_PORT: env.port(50051),
  /** JSON file of API keys (hashed); see docs. */
  API_KEYS_FILE: z.string().min(1).optional(),
  /** The same JSON inline, for containers that take secrets as variables. */
  API_KEYS: z.string().min(1).optional(),
  /** Answer cache in Redis; an in-memory LRU without it. */
  REDIS_URL: env.url().optional(),
  QUESTION_TIMEOUT_MS: env.positiveInt(30_000),
  MAX_QUESTION_CHARS: env.positiveInt(2_000),
  MAX_BODY_BYTES: env.positiveInt(65_536),
});

export type Config = z.infer<typeof configSchema>;
