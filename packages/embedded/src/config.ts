import { env, jetstreamEnv, natsSecurityEnv, serviceEnv } from '@hopline/config';
import { z } from 'zod';

/**
 * What the embedded launcher reads itself. Every service's own variables (see its
 * `configSchema`) apply as well; the launcher only fixes the ports the services use to reach
 * each other inside the process.
 */
export const embeddedConfigSchema = z.object({
  ...serviceEnv,
  ...jetstreamEnv,
  /** Switches the in-memory bus to a NATS server (JetStream for ingestion and traces). */
  NATS_URL: env.endpoints('NATS_USER and NATS_PASSWORD (or NATS_CREDS, NATS_TOKEN)').optional(),
  /**
   * With NATS_URL: how the process authenticates and checks the server's certificate. One
   * identity for the three connections it opens, so its user needs what the gateway, the
   * hop-reasoner and the retrieval worker need together.
   */
  ...natsSecurityEnv,
  /** Where the indexes, traces and the dev API key persist, relative to the working folder. */
  DATA_DIR: env.string('.data'),
  HTTP_HOST: env.string('127.0.0.1'),
  HTTP_PORT: env.port(8080),
  GRPC_HOST: env.string('127.0.0.1'),
  GRPC_PORT: env.port(50051),
  /** Loads the bundled demo corpus into the dev tenant's "demo" kb when it is empty. */
  LOAD_DEMO_CORPUS: env.boolean(true),
});

export type EmbeddedConfig = z.infer<typeof embeddedConfigSchema>;
