import { parse } from 'yaml';
import { z } from 'zod';

/** Parses a compose `.env` file: KEY=VALUE lines, comments and blank lines; optional quotes. */
export function parseDotEnv(text: string): Map<string, string> {
  const variables = new Map<string, string>();
  text.split('\n').forEach((raw, index) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    const match = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(line);
    if (!match?.[1] || match[2] === undefined) throw new Error(`.env:${index + 1}: expected KEY=VALUE, got "${line}"`);
    variables.set(match[1], match[2].replace(/^(['"])(.*)\1$/, '$2'));
  });
  return variables;
}

export interface Interpolation {
  value: unknown;
  /** Variables the file substitutes, with whether each has a fallback in the file itself. */
  used: Map<string, { hasDefault: boolean }>;
  /** Substitutions that compose would refuse or leave empty without a value. */
  unresolved: string[];
}

const REFERENCE = /\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?])([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)/g;

/**
 * Substitutes variables in every string of a parsed compose file as `docker compose` does:
 * `${VAR}`, `$VAR`, `${VAR:-default}`, `${VAR-default}`, `${VAR:?error}`, and `$$` for a
 * literal dollar. Values come from the .env variables only, so the check does not depend on
 * the shell it runs in.
 */
export function interpolate(value: unknown, variables: ReadonlyMap<string, string>): Interpolation {
  const used = new Map<string, { hasDefault: boolean }>();
  const unresolved: string[] = [];
  const substitute = (text: string): string =>
    text.replace(
      REFERENCE,
      (
        whole,
        braced: string | undefined,
        operator: string | undefined,
        argument: string | undefined,
        bare: string | undefined,
      ) => {
        if (whole === '$$') return '$';
        const name = (braced ?? bare) as string;
        const hasDefault = operator === '-' || operator === ':-';
        used.set(name, { hasDefault: hasDefault || (used.get(name)?.hasDefault ?? false) });
        const current = variables.get(name);
        const empty = current === undefined || current === '';
        if (operator === ':-') return empty ? (argument ?? '') : current;
        if (operator === '-') return current ?? argument ?? '';
        if (operator === ':?' || operator === '?') {
          if (operator === ':?' ? empty : current === undefined) unresolved.push(`${name}: ${argument ?? 'required'}`);
          return current ?? '';
        }
        if (current === undefined) unresolved.push(`${name} is not set`);
        return current ?? '';
      },
    );
  const walk = (node: unknown): unknown => {
    if (typeof node === 'string') return substitute(node);
    if (Array.isArray(node)) return node.map(walk);
    if (node !== null && typeof node === 'object') {
      return Object.fromEntries(Object.entries(node).map(([key, child]) => [key, walk(child)]));
    }
    return node;
  };
  return { value: walk(value), used, unresolved };
}

const stringMap = z.record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()]));

const healthcheckSchema = z
  .object({
    test: z.union([z.string(), z.array(z.string())]).optional(),
    disable: z.boolean().optional(),
  })
  .passthrough();

const dependsOnSchema = z.union([
  z
    .array(z.string())
    .transform((names) => Object.fromEntries(names.map((name) => [name, { condition: 'service_started' }]))),
  z.record(z.string(), z.object({ condition: z.string().default('service_started') }).passthrough()),
]);

export const composeServiceSchema = z
  .object({
    image: z.string().optional(),
    build: z
      .union([
        z.string().transform((context) => ({ context, dockerfile: undefined, args: {} })),
        z.object({
          context: z.string(),
          dockerfile: z.string().optional(),
          args: z
            .union([
              stringMap,
              z.array(z.string()).transform((list) => Object.fromEntries(list.map((item) => item.split(/=(.*)/s)))),
            ])
            .default({}),
        }),
      ])
      .optional(),
    environment: z
      .union([
        stringMap,
        z
          .array(z.string())
          .transform((list) =>
            Object.fromEntries(
              list.map((item) => [
                item.split('=')[0] ?? item,
                item.includes('=') ? item.slice(item.indexOf('=') + 1) : null,
              ]),
            ),
          ),
      ])
      .optional(),
    env_file: z.unknown().optional(),
    healthcheck: healthcheckSchema.optional(),
    depends_on: dependsOnSchema.optional(),
    ports: z.array(z.union([z.string(), z.number(), z.object({ target: z.number() }).passthrough()])).optional(),
    deploy: z.object({ replicas: z.number().int().optional() }).passthrough().optional(),
    container_name: z.string().optional(),
    // The short syntax (`source:target[:mode]`) only: what docker-compose.yml uses.
    volumes: z.array(z.string()).optional(),
  })
  .passthrough();

export type ComposeService = z.infer<typeof composeServiceSchema>;

export const composeFileSchema = z
  .object({
    services: z.record(z.string(), composeServiceSchema),
  })
  .passthrough();

export type ComposeFile = z.infer<typeof composeFileSchema>;

export interface LoadedCompose {
  file: ComposeFile;
  interpolation: Interpolation;
}

/** Parses docker-compose.yml (YAML merge keys included), substitutes .env and validates its shape. */
export function loadCompose(composeText: string, dotEnvText: string): LoadedCompose {
  const raw: unknown = parse(composeText, { merge: true });
  const interpolation = interpolate(raw, parseDotEnv(dotEnvText));
  const result = composeFileSchema.safeParse(interpolation.value);
  if (!result.success) {
    throw new Error(
      `docker-compose.yml: ${result.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ')}`,
    );
  }
  return { file: result.data, interpolation };
}

/** A service's environment as compose hands it to the container; a bare `KEY` with no value is left out. */
export function containerEnvironment(service: ComposeService): Record<string, string> {
  return Object.fromEntries(
    Object.entries(service.environment ?? {})
      .filter((entry): entry is [string, string | number | boolean] => entry[1] !== null)
      .map(([key, value]) => [key, String(value)]),
  );
}

/** The container ports a service publishes, whatever the syntax. */
export function publishedTargets(service: ComposeService): number[] {
  return (service.ports ?? []).map((port) => {
    if (typeof port === 'number') return port;
    if (typeof port === 'object') return port.target;
    const target = port.split(':').at(-1)?.split('/')[0] ?? '';
    return Number(target);
  });
}

/** Where a service mounts `source` (a path as docker-compose.yml writes it), if it does. */
export function mountTarget(service: ComposeService, source: string): string | undefined {
  for (const volume of service.volumes ?? []) {
    const [from, to] = volume.split(':');
    if (from === source) return to;
  }
  return undefined;
}
