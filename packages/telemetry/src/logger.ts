import { isSpanContextValid, trace } from '@opentelemetry/api';
import { pino, type DestinationStream } from 'pino';

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

const isPlainObject = (value: object): value is Record<string, unknown> => {
  const prototype = Object.getPrototypeOf(value) as unknown;
  return prototype === Object.prototype || prototype === null;
};

/**
 * A field value as it is logged: errors wherever they sit, bigints as strings (a JSON number
 * would lose their precision), a reference back to an enclosing object as "[Circular]".
 * Anything else is left to pino, which stringifies it safely.
 */
function logValue(value: unknown, enclosing: Set<object>): unknown {
  if (value instanceof Error) return serializeError(value);
  if (typeof value === 'bigint') return value.toString();
  if (typeof value !== 'object' || value === null) return value;
  if (!Array.isArray(value) && !isPlainObject(value)) return value;
  if (enclosing.has(value)) return '[Circular]';
  enclosing.add(value);
  const copy = Array.isArray(value)
    ? value.map((item) => logValue(item, enclosing))
    : Object.fromEntries(Object.entries(value).map(([key, item]) => [key, logValue(item, enclosing)]));
  enclosing.delete(value);
  return copy;
}

function ownFields(fields: LogFields): LogFields {
  const line: LogFields = {};
  for (const [key, value] of Object.entries(fields)) {
    if (!RESERVED.has(key)) line[key] = logValue(value, new Set());
  }
  return line;
}

function activeTraceIds(): { trace_id?: string; span_id?: string } {
  const spanContext = trace.getActiveSpan()?.spanContext();
  if (!spanContext || !isSpanContextValid(spanContext)) return {};
  return { trace_id: spanContext.traceId, span_id: spanContext.spanId };
}

let standardOutput: DestinationStream | undefined;

/**
 * A JSON-lines logger on pino: `{ time, level, service, msg, trace_id, span_id, ...fields }`,
 * with the ids of the span active where the line is written.
 */
export function createLogger(service: string, options: LoggerOptions = {}): Logger {
  // One synchronous stream for every logger of the process (the embedded mode has one per
  // service): lines are written whole and in order, and none is lost when the process exits.
  const destination = options.destination ?? (standardOutput ??= pino.destination({ dest: 1, sync: true }));
  const root = pino(
    {
      level: options.level ?? 'info',
      base: { service },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      mixin: activeTraceIds,
      // The span's ids are the line's own: a field of the same name does not replace them.
      mixinMergeStrategy: (fields, ids) => Object.assign(fields, ids),
    },
    destination,
  );
  return wrap(root);
}

function wrap(logger: pino.Logger): Logger {
  const write = (level: EmittingLevel) => (msg: string, fields?: LogFields) => {
    if (fields) logger[level](ownFields(fields), msg);
    else logger[level](msg);
  };
  return {
    level: logger.level as LogLevel,
    debug: write('debug'),
    info: write('info'),
    warn: write('warn'),
    error: write('error'),
    isLevelEnabled: (level) => logger.isLevelEnabled(level),
    child: (fields) => wrap(logger.child(ownFields(fields))),
  };
}
