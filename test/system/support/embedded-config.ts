import { embeddedConfigSchema, type EmbeddedConfig } from '@hopline/embedded';

/**
 * The embedded mode as the system tests start it: its data under `dataDir`, HTTP and gRPC on
 * free ports, warnings only in the log; `settings` add to it or override it.
 */
export function embeddedTestConfig(dataDir: string, settings: Record<string, string | undefined> = {}): EmbeddedConfig {
  return embeddedConfigSchema.parse({
    DATA_DIR: dataDir,
    HTTP_PORT: '0',
    GRPC_PORT: '0',
    LOG_LEVEL: 'warn',
    ...settings,
  });
}
