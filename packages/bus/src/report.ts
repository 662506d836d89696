import type { BusErrorReporter } from './bus.js';

/** The default BusErrorReporter: one JSON line on stderr, so that no failure goes unseen. */
export const reportToStderr: BusErrorReporter = (error, where) => {
  const message = error instanceof Error ? error.message : String(error);
  console.error(
    JSON.stringify({ level: 'error', msg: `bus ${where.operation} failed`, subject: where.subject, error: message }),
  );
};
