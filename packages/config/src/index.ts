import { z } from 'zod';

/**
 * A service's configuration is a zod object whose keys are the environment variables it
 * reads. The same schema validates the environment at start-up and tells the deployment
 * checks which variables exist.
 */
export type EnvSchema = z.ZodObject<Record<string, z.ZodType>>;

export class ConfigError extends Error {
  constructor(
    readonly service: string,
    readonly problems: string[],
  ) {
    super(`${service}: invalid configuration\n${problems.map((problem) => `  - ${problem}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/** Parses the environment; every problem is reported at once, each naming its variable. */
export function loadConfig<S extends EnvSchema>(
  service: string,
  schema: S,
  env: NodeJS.ProcessEnv = process.env,
): z.infer<S> {
  const present: Record<string, string> = {};
  for (const key of Object.keys(schema.shape)) {
    const value = env[key];
    if (value !== undefined && value !== '') present[key] = value;
  }
  const result = schema.safeParse(present);
  if (result.success) return result.data;
  throw new ConfigError(
    service,
    result.error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`),
  );
}

/** The environment variable names a schema reads. */
export function envVariables(schema: EnvSchema): string[] {
  return Object.keys(schema.shape).sort();
}

function carriesCredentials(url: string): boolean {
  try {
    const parsed = new URL(url);
    return parsed.username !== '' || parsed.password !== '';
  } catch {
    return false; // not a URL: the URL check says so
  }
}
const credentialsRefused = (instead: string) => ({
  message: `must not carry user:password (they would be shown wherever the URL is named): set ${instead} instead`,
});

// Small building blocks so that every service reads ports, URLs and durations the same way.
export const env = {
  port: (fallback: number) => z.coerce.number().int().min(0).max(65_535).default(fallback),
  positiveInt: (fallback: number) => z.coerce.number().int().positive().default(fallback),
  number: (fallback: number) => z.coerce.number().finite().default(fallback),
  url: () => z.string().url(),
  /**
   * A URL whose client takes no credentials from it (fetch refuses such a URL, nats.js ignores
   * them), and which errors and logs name: user:password there would only leak. `instead`
   * names the variables that carry them.
   */
  endpoint: (instead: string) =>
    z
      .string()
      .url()
      .refine((value) => !carriesCredentials(value), credentialsRefused(instead)),
  /**
   * One URL or a comma-separated list of them, kept as written: a NATS cluster's nodes, so that
   * a client whose first server is gone still connects to another. No credentials, as `endpoint`.
   */
  endpoints: (instead: string) =>
    z
      .string()
      .refine((value) => value.split(',').every((item) => z.string().url().safeParse(item.trim()).success), {
        message: 'expected a URL or a comma-separated list of URLs',
      })
      .refine(
        (value) => value.split(',').every((item) => !carriesCredentials(item.trim())),
        credentialsRefused(instead),
      ),
  string: (fallback: string) => z.string().min(1).default(fallback),
  boolean: (fallback: boolean) =>
    z
      .enum(['true', 'false', '1', '0'])
      .default(fallback ? 'true' : 'false')
      .transform((value) => value === 'true' || value === '1'),
  list: () =>
    z.string().transform((value) =>
      value
        .split(',')
        .map((item) => item.trim())
        .filter((item) => item.length > 0),
    ),
} as const;

/** Variables the OpenTelemetry SDK reads; declared so that deployments can be checked against them. */
export const telemetryEnv = {
  OTEL_SERVICE_NAME: z.string().min(1).optional(),
  OTEL_SDK_DISABLED: z.enum(['true', 'false']).optional(),
  /**
   * Comma-separated exporter names. Only whether it names `otlp` matters (the default): any
   * other list exports nothing, so any name is taken.
   */
  OTEL_TRACES_EXPORTER: z.string().min(1).optional(),
  OTEL_EXPORTER_OTLP_ENDPOINT: z.string().url().optional(),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: z.string().url().optional(),
  OTEL_EXPORTER_OTLP_PROTOCOL: z.enum(['grpc', 'http/protobuf', 'http/json']).optional(),
  /** Overrides OTEL_EXPORTER_OTLP_PROTOCOL for traces; the same three protocols. */
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: z.enum(['grpc', 'http/protobuf', 'http/json']).optional(),
  /**
   * The samplers the SDK builds; it would log any other name and fall back to
   * `parentbased_always_on`, so a misspelt one is refused here instead. Set without an OTLP
   * endpoint, it also keeps spans recorded.
   */
  OTEL_TRACES_SAMPLER: z
    .enum([
      'always_on',
      'always_off',
      'traceidratio',
      'parentbased_always_on',
      'parentbased_always_off',
      'parentbased_traceidratio',
    ])
    .optional(),
  /** The ratio of the `traceidratio` samplers; the SDK falls back to 1 outside [0, 1]. */
  OTEL_TRACES_SAMPLER_ARG: z.coerce.number().min(0).max(1).optional(),
  OTEL_BSP_SCHEDULE_DELAY: z.coerce.number().int().nonnegative().optional(),
  OTEL_RESOURCE_ATTRIBUTES: z.string().optional(),
} as const;

/**
 * How the JetStream streams and buckets a service creates are kept; read by every service that
 * creates one (see `jetStreamPolicyFrom` in @hopline/bus). Ages in hours, sizes in bytes.
 */
export const jetstreamEnv = {
  /** Copies of every stream and bucket: 1 on a single server, 3 on a three-node cluster. */
  JETSTREAM_REPLICAS: z.coerce.number().int().min(1).max(5).default(1),
  JETSTREAM_STORAGE: z.enum(['file', 'memory']).default('file'),
  DEAD_LETTERS_MAX_AGE_HOURS: z.coerce.number().positive().default(720),
  DEAD_LETTERS_MAX_BYTES: env.positiveInt(1024 ** 3),
  EVENTS_MAX_AGE_HOURS: z.coerce.number().positive().default(24),
  EVENTS_MAX_BYTES: env.positiveInt(1024 ** 3),
  TRACES_MAX_AGE_HOURS: z.coerce.number().positive().default(168),
  TRACES_MAX_BYTES: env.positiveInt(1024 ** 3),
} as const;

/**
 * How a service authenticates to NATS and checks its certificate (see `natsSecurityFrom` in
 * @hopline/bus): the variables the NATS tools read. Paths name files, read again on reconnect.
 */
export const natsSecurityEnv = {
  /** Credentials file (JWT and seed) of an operator-mode deployment. */
  NATS_CREDS: z.string().min(1).optional(),
  /** File with the service's nkey seed, as `pnpm fabric:credentials` writes it. */
  NATS_NKEY: z.string().min(1).optional(),
  NATS_USER: z.string().min(1).optional(),
  NATS_PASSWORD: z.string().min(1).optional(),
  NATS_TOKEN: z.string().min(1).optional(),
  /** CA certificate (PEM) the server's must chain to; setting it turns TLS on. */
  NATS_CA: z.string().min(1).optional(),
  /** Client certificate and key (PEM), for a server that verifies clients. */
  NATS_CERT: z.string().min(1).optional(),
  NATS_KEY: z.string().min(1).optional(),
} as const;

/**
 * Mutual TLS on the gRPC hops between services (see `grpcTlsFrom` in @hopline/grpc): this
 * service's certificate and key, and the CA its peers' certificates must chain to. All three or
 * none; none is plaintext, as in development. The files are watched and reloaded.
 */
export const grpcTlsEnv = {
  GRPC_TLS_CA: z.string().min(1).optional(),
  GRPC_TLS_CERT: z.string().min(1).optional(),
  GRPC_TLS_KEY: z.string().min(1).optional(),
} as const;

/** What every service process reads besides its own settings. */
export const serviceEnv = {
  ...telemetryEnv,
  LOG_LEVEL: z.enum(['debug', 'info', 'warn', 'error']).default('info'),
  /** Port of the ops server (/metrics, /livez, /readyz, /healthz); 0 picks a free one. */
  METRICS_PORT: env.port(0),
  /**
   * Where the ops server listens; unset, where the service itself listens (its HTTP or gRPC
   * host), or 0.0.0.0 for a service without a port of its own, so that probes reach it.
   */
  METRICS_HOST: z.string().min(1).optional(),
} as const;
