import { isSpanContextValid, trace } from '@opentelemetry/api';

export const LOG_LEVELS = ['debug', 'info', 'warn', 'error', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
type EmittingLevel = Exclude<LogLevel, 'silent'>;

export type LogFields = Record<string, unknown>;

export interface LogDestination {
  write(line: string): unknown;
}

export interface LoggerOptions {
  /** Lines below this level are dropped; `silent` drops all. Default `info`. */
  level?: LogLevel;
  /** Where the JSON lines go. Default: standard output. */
  destination?: LogDestination;
}

export interface Logger {
  readonly level: LogLevel;
  debug(msg: string, fields?: LogFields): void;
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
  isLevelEnabled(level: EmittingLevel): boolean;
  /** A logger that adds `fields` to every line it writes. */
  child(fields: LogFields): Logger;
}

const SEVERITY: Record<LogLevel, number> = {
  debug: 10,
  info: 20,
  warn: 30,
  error: 40,
  silent: Number.POSITIVE_INFINITY,
};

// The line's own keys: a field of the same name would make the line lie about itself.
const RESERVED = new Set(['time', 'level', 'service', 'msg', 'trace_id', 'span_id']);

const MAX_CAUSE_DEPTH = 3;

interface SerializedError {
  name: string;
  code?: string;
  message: string;
  stack?: string;
  cause?: SerializedError | string;
}

/**
 * An error as a log value. Taxonomy errors (those with a string `code`) are expected outcomes
 * and log without a stack; anything else is a bug, and its stack is what finds it.
 */
export function serializeError(error: Error, depth = 0): SerializedError {
  const code = (error as { code?: unknown }).code;
  const serialized: SerializedError = { name: error.name, message: error.message };
  if (typeof code === 'string') serialized.code = code;
  else if (error.stack) serialized.stack = error.stack;
  if (error.cause !== undefined && depth < MAX_CAUSE_DEPTH) {
    serialized.cause = error.cause instanceof Error ? serializeError(error.cause, depth + 1) : String(error.cause);
  }
  return serialized;
}

/** A JSON replacer for one line: errors as objects, bigints as strings, cycles cut. */
function lineReplacer(): (key: string, value: unknown) => unknown {
  const seen = new WeakSet<object>();
  return (_key, value) => {
    if (value instanceof Error) return serializeError(value);
    if (typeof value === 'bigint') return value.toString();
    if (typeof value === 'object' && value !== null) {
      if (seen.has(value)) return '[Circular]';
      seen.add(value);
    }
    return value;
  };
}

function activeTraceIds(): { trace_id?: string; span_id?: string } {
  const spanContext = trace.getActiveSpan()?.spanContext();
  if (!spanContext || !isSpanContextValid(spanContext)) return {};
  return { trace_id: spanContext.traceId, span_id: spanContext.spanId };
}

/**
 * A JSON-lines logger: `{ time, level, service, msg, trace_id, span_id, ...fields }`, with the
 * ids of the span active where the line is written.
 */
export function createLogger(service: string, options: LoggerOptions = {}): Logger {
  return boundLogger(service, options, {});
}

function boundLogger(service: string, options: LoggerOptions, bound: LogFields): Logger {
  const level = options.level ?? 'info';
  const destination = options.destination ?? process.stdout;
  const threshold = SEVERITY[level];

  const write = (lineLevel: EmittingLevel, msg: string, fields: LogFields | undefined) => {
    if (SEVERITY[lineLevel] < threshold) return;
    const line: LogFields = { time: new Date().toISOString(), level: lineLevel, service, msg, ...activeTraceIds() };
    for (const source of [bound, fields ?? {}]) {
      for (const [key, value] of Object.entries(source)) {
        if (!RESERVED.has(key)) line[key] = value;
      }
    }
    let text: string;
    try {
      text = JSON.stringify(line, lineReplacer());
    } catch (error) {
      // A field whose toJSON throws must not cost the line itself.
      text = JSON.stringify({
        time: line.time,
        level: lineLevel,
        service,
        msg,
        ...activeTraceIds(),
        log_error: String(error),
      });
    }
    destination.write(`${text}\n`);
  };

  return {
    level,
    debug: (msg, fields) => write('debug', msg, fields),
    info: (msg, fields) => write('info', msg, fields),
    warn: (msg, fields) => write('warn', msg, fields),
    error: (msg, fields) => write('error', msg, fields),
    isLevelEnabled: (candidate) => SEVERITY[candidate] >= threshold,
    child: (fields) => boundLogger(service, { level, destination }, { ...bound, ...fields }),
  };
}
