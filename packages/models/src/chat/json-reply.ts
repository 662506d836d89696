import { HoplineError } from '@hopline/contracts';
import { z } from 'zod';

/**
 * The model answered, but not in the shape asked for, even after a repair attempt. Not an
 * infrastructure failure: the server is healthy, so no breaker counts it; the caller falls
 * back to its rules.
 */
export class ModelOutputError extends HoplineError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('invalid_argument', message, options);
  }
}

export type JsonReply<T> = { ok: true; value: T } | { ok: false; problem: string };

// How many bracketed spans of a reply are tried as its JSON before it counts as having none.
const MAX_CANDIDATES = 16;

/** Where the bracketed span opening at `open` closes (brackets inside strings skipped); -1 if it does not. */
function closingOf(text: string, open: number): number {
  const expected: string[] = [];
  let inString = false;
  for (let at = open; at < text.length; at += 1) {
    const char = text[at];
    if (inString) {
      if (char === '\\') at += 1;
      else if (char === '"') inString = false;
    } else if (char === '"') inString = true;
    else if (char === '{') expected.push('}');
    else if (char === '[') expected.push(']');
    else if (char === '}' || char === ']') {
      if (expected.pop() !== char) return -1;
      if (expected.length === 0) return at;
    }
  }
  return -1;
}

/**
 * Models wrap JSON in prose or a ```json fence, and the prose may hold brackets of its own
 * ("according to [E1]", "{E2}"): each balanced bracketed span is a candidate, in order.
 */
function* jsonCandidates(reply: string): Generator<string> {
  const fenced = /```(?:json)?\s*([\s\S]*?)```/i.exec(reply);
  const body = (fenced?.[1] ?? reply).trim();
  let from = 0;
  for (let tried = 0; tried < MAX_CANDIDATES; tried += 1) {
    const offset = body.slice(from).search(/[[{]/);
    if (offset < 0) return;
    const open = from + offset;
    const close = closingOf(body, open);
    if (close > open) yield body.slice(open, close + 1);
    from = open + 1;
  }
}

/** The reply's first bracketed span that is JSON of the schema's shape; else why the first JSON-looking one is not. */
export function parseJsonReply<T>(reply: string, schema: z.ZodType<T>): JsonReply<T> {
  let notParsed: string | undefined;
  let notMatching: string | undefined;
  for (const text of jsonCandidates(reply)) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (error) {
      notParsed ??= `the JSON does not parse: ${(error as Error).message}`;
      continue;
    }
    const result = schema.safeParse(parsed);
    if (result.success) return { ok: true, value: result.data };
    const issues = result.error.issues
      .slice(0, 5)
      .map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`);
    notMatching ??= `the JSON does not match the schema: ${issues.join('; ')}`;
  }
  const opened = /[[{]/.test(reply);
  return {
    ok: false,
    problem:
      notMatching ??
      notParsed ??
      (opened ? 'the JSON does not close (a reply cut short?)' : 'the reply contains no JSON object'),
  };
}

/** The schema as JSON Schema, for `response_format`. */
export function jsonSchemaOf(schema: z.ZodType<unknown>): Record<string, unknown> {
  return z.toJSONSchema(schema, { unrepresentable: 'any', io: 'input' }) as Record<string, unknown>;
}

/** The schema as JSON Schema text, for telling the model what a repaired reply must look like. */
export function describeSchema(schema: z.ZodType<unknown>): string {
  return JSON.stringify(jsonSchemaOf(schema));
}
