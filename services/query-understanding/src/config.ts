import { env, grpcTlsEnv, serviceEnv } from '@hopline/config';
import { z } from 'zod';

export const configSchema = z.object({
  ...serviceEnv,
  GRPC_HOST: env.string('0.0.0.0'),
  ...grpcTlsEnv,
  GRPC_PORT: env.port(50061),
  /** OpenAI-compatible chat endpoint; without it the rules decide alone. */
  OPENAI_BASE_URL: env.endpoint('OPENAI_API_KEY').optional(),
  OPENAI_API_KEY: z.string().optional(),
  PLANNER_MODEL: env.string('gpt-4o-mini'),
});

export type Config = z.infer<typeof configSchema>;
