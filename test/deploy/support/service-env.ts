import { ConfigError, loadConfig, type EnvSchema } from '@hopline/config';

const LOOPBACK = /(^|[/@])(127\.0\.0\.1|localhost|\[::1\])(:|\/|$)/;

/** What the schema does when a variable is absent: fails, yields nothing, or yields a default. */
export function absentBehaviour(
  schema: EnvSchema,
  key: string,
): { kind: 'required' } | { kind: 'optional' } | { kind: 'default'; value: unknown } {
  const field = schema.shape[key];
  if (!field) throw new Error(`${key} is not in the schema`);
  const result = field.safeParse(undefined);
  if (!result.success) return { kind: 'required' };
  return result.data === undefined ? { kind: 'optional' } : { kind: 'default', value: result.data };
}

/**
 * The variables a service must be given when it runs in a container, each with the reason,
 * all derived from its schema:
 * - required variables (no default);
 * - variables whose default points at the loopback interface (a backend or peer on
 *   127.0.0.1 is never in the same container);
 * - ports whose default is 0 ("pick a free one"): probes and health checks need a fixed one;
 * - OTEL_SERVICE_NAME, which must name the service, and an OTLP endpoint, without which the
 *   SDK exports nothing and the question's trace misses this service.
 */
export function variablesNeededInContainer(schema: EnvSchema): Map<string, string> {
  const needed = new Map<string, string>();
  for (const key of Object.keys(schema.shape)) {
    const absent = absentBehaviour(schema, key);
    if (absent.kind === 'required') needed.set(key, 'it is required and has no default');
    else if (absent.kind === 'default' && typeof absent.value === 'string' && LOOPBACK.test(absent.value)) {
      needed.set(key, `its default ${absent.value} is the container's own loopback`);
    } else if (absent.kind === 'default' && absent.value === 0 && key.endsWith('_PORT')) {
      needed.set(key, 'its default 0 picks a random port that no probe can find');
    }
  }
  if ('OTEL_SERVICE_NAME' in schema.shape) needed.set('OTEL_SERVICE_NAME', 'traces must carry the service name');
  if ('OTEL_EXPORTER_OTLP_ENDPOINT' in schema.shape)
    needed.set('OTEL_EXPORTER_OTLP_ENDPOINT', 'without it no span is exported');
  return needed;
}

export interface EnvReport {
  /** Set, but not a key of the service's configSchema. */
  unread: string[];
  /** Needed in a container (see variablesNeededInContainer) but not set, with the reason. */
  missing: string[];
  /** What loadConfig reports for the environment, when it rejects it. */
  invalid: string[];
  /** The configuration the service would start with, when valid. */
  config: Record<string, unknown> | undefined;
}

/** Checks one container's environment against its service's configSchema. */
export function checkServiceEnvironment(
  service: { name: string; schema: EnvSchema },
  env: Readonly<Record<string, string>>,
): EnvReport {
  const keys = new Set(Object.keys(service.schema.shape));
  const unread = Object.keys(env)
    .filter((key) => !keys.has(key))
    .sort();
  const missing = [...variablesNeededInContainer(service.schema)]
    .filter(([key]) => env[key] === undefined || env[key] === '')
    .map(([key, reason]) => `${key} (${reason})`);
  if (env.OTEL_SERVICE_NAME !== undefined && env.OTEL_SERVICE_NAME !== service.name) {
    missing.push(`OTEL_SERVICE_NAME must be "${service.name}", not "${env.OTEL_SERVICE_NAME}"`);
  }
  try {
    const config = loadConfig(service.name, service.schema, env) as Record<string, unknown>;
    return { unread, missing, invalid: [], config };
  } catch (error) {
    if (error instanceof ConfigError) return { unread, missing, invalid: error.problems, config: undefined };
    throw error;
  }
}

/** Host and port of a `scheme://host:port/...` URL or a bare `host:port`; undefined for anything else. */
export function hostAndPort(value: string): { host: string; port: number | undefined } | undefined {
  const bare = /^([A-Za-z0-9.-]+):(\d+)$/.exec(value);
  if (bare?.[1] && bare[2]) return { host: bare[1], port: Number(bare[2]) };
  if (!/^[a-z][a-z0-9+.-]*:\/\/[^/]/i.test(value)) return undefined;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return undefined;
  }
  const defaultPorts: Record<string, number> = { 'http:': 80, 'https:': 443 };
  return { host: url.hostname, port: url.port ? Number(url.port) : defaultPorts[url.protocol] };
}
