// What `pnpm ask` and `pnpm ingest` share: the command line, the gateway's address, the help
// on the environment, and how a failure reaches the terminal.
import { parseArgs, type ParseArgsConfig } from 'node:util';

export const DEFAULT_GATEWAY_URL = 'http://127.0.0.1:8080';

export const ENVIRONMENT_HELP = `environment:
  HOPLINE_URL      the gateway's HTTP address when --url is not given (default ${DEFAULT_GATEWAY_URL})
  HOPLINE_API_KEY  the API key; without it, the key the embedded mode saved in .data/dev-api-key
                   under the current folder`;

/** A command line the command cannot run; it exits with status 2 and its usage. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/** parseArgs, with an unknown or malformed option reported as a usage error. */
export function parseCommandLine<T extends ParseArgsConfig>(config: T): ReturnType<typeof parseArgs<T>> {
  try {
    return parseArgs(config);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

/** The gateway's base URL: --url, else HOPLINE_URL (when not empty), else the embedded mode's default. */
export function gatewayUrl(url: string | undefined, env: NodeJS.ProcessEnv = process.env): URL {
  const value = url ?? (env.HOPLINE_URL || DEFAULT_GATEWAY_URL);
  if (!URL.canParse(value)) throw new UsageError(`"${value}" is not a URL (--url or HOPLINE_URL)`);
  return new URL(value);
}

/**
 * An API path under the gateway's base URL, keeping the base's own path: behind a proxy at
 * http://host/hopline/, `/v1/ask` is http://host/hopline/v1/ask (`new URL('/v1/ask', base)`
 * would drop /hopline).
 */
export function gatewayEndpoint(base: URL, path: string): URL {
  const url = new URL(base);
  url.pathname = `${url.pathname.replace(/\/+$/, '')}/${path.replace(/^\/+/, '')}`;
  return url;
}

/** A request that did not reach the gateway, with the reason fetch keeps in its cause. */
export function unreachable(url: URL, error: unknown): Error {
  const cause = (error as Error).cause;
  return new Error(
    `cannot reach the gateway at ${url.origin}: ${cause instanceof Error ? cause.message : (error as Error).message}`,
  );
}

/** A gateway refusal as one line: status, and the problem document's title and detail. */
export async function refusalLine(response: Response): Promise<string> {
  const text = await response.text();
  try {
    const problem = JSON.parse(text) as { title?: unknown; detail?: unknown };
    return `${response.status} ${String(problem.title ?? response.statusText)}${problem.detail ? `: ${String(problem.detail)}` : ''}`;
  } catch {
    return `${response.status} ${response.statusText}${text ? `: ${text}` : ''}`.replace(/\s+/g, ' ');
  }
}

/**
 * Runs a command and reports a failure as one line, without a stack: the cause is almost
 * always the input (a missing folder, a malformed file, an unreachable gateway), not a bug.
 */
export function runCommand(usage: string, main: () => Promise<number>): void {
  main().then(
    (status) => {
      process.exitCode = status;
    },
    (error: unknown) => {
      const message = (error instanceof Error ? error.message : String(error)).replace(/\s*\n\s*/g, '; ');
      console.error(`error: ${message}`);
      if (error instanceof UsageError) console.error(usage);
      process.exitCode = error instanceof UsageError ? 2 : 1;
    },
  );
}
