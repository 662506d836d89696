import { shutdownTelemetry, type Logger } from '@hopline/telemetry';

/**
 * Runs a service's own calls on invented inputs, in turn, before it listens: what a first call
 * loads lazily (jieba's dictionary, compiled code, a channel's connection) is then loaded before
 * the service says it is ready, instead of inside the first questions' budgets, where a cold
 * process on a loaded machine ran past them and opened its callers' breakers. A call that throws
 * stops the start-up: it is the service's own code failing on an input made for it.
 */
export async function warmUp(
  calls: ReadonlyArray<() => Promise<unknown>>,
  logger: Pick<Logger, 'info'>,
): Promise<void> {
  const startedAt = performance.now();
  for (const call of calls) await call();
  logger.info('warmed up', { calls: calls.length, ms: Math.round(performance.now() - startedAt) });
}

export interface RunningService {
  /** Stops taking work, finishes or cancels what is in flight, closes servers and connections. */
  stop(): Promise<void>;
}

export interface ShutdownOptions {
  logger: Pick<Logger, 'info' | 'error'>;
  /** A stop that takes longer than this is abandoned and the process exits with status 1. */
  timeoutMs?: number;
  signals?: readonly NodeJS.Signals[];
}

// How long a watchdog's exit waits for the spans to be exported.
const TELEMETRY_FLUSH_CAP_MS = 2_000;

/**
 * Graceful shutdown for a service process: on SIGTERM or SIGINT, stop the service once,
 * flush telemetry last (in `finally`, so a failed stop still exports its spans), then exit. A
 * stop that takes longer than its timeout is abandoned, its spans still flushed.
 */
export function stopOnSignals(service: RunningService, options: ShutdownOptions): void {
  const timeoutMs = options.timeoutMs ?? 15_000;
  let stopping = false;
  const stop = async (signal: NodeJS.Signals): Promise<void> => {
    if (stopping) return;
    stopping = true;
    options.logger.info('shutting down', { signal });
    const watchdog = setTimeout(() => {
      options.logger.error('shutdown took too long; exiting', { timeoutMs });
      // The spans of the stop that hung say why: exported first, within a bound of their own.
      const cap = setTimeout(() => process.exit(1), TELEMETRY_FLUSH_CAP_MS);
      void shutdownTelemetry()
        .catch(() => undefined)
        .finally(() => {
          clearTimeout(cap);
          process.exit(1);
        });
    }, timeoutMs);
    watchdog.unref();
    let status = 0;
    try {
      await service.stop();
      options.logger.info('stopped');
    } catch (error) {
      status = 1;
      options.logger.error('shutdown failed', { error });
    } finally {
      await shutdownTelemetry();
      clearTimeout(watchdog);
      process.exit(status);
    }
  };
  for (const signal of options.signals ?? ['SIGTERM', 'SIGINT'])
    process.once(signal, (received) => void stop(received));
}

/** Stops services in the given order, continuing past failures, and rethrows the first. */
export async function stopAll(services: ReadonlyArray<RunningService | undefined>): Promise<void> {
  let firstError: unknown;
  for (const service of services) {
    try {
      await service?.stop();
    } catch (error) {
      firstError ??= error;
    }
  }
  if (firstError !== undefined) throw firstError;
}
