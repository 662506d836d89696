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

// Models wrap JSON in prose or a ```json fence; the object itself is what counts.
function jsonText(reply: string): string | undefined {
  const fenced = /```(?:json)?\s*([\s\S]*?)```/i.exec(reply);
  const body = (fenced?.[1] ?? reply).trim();
  const open = body.search(/[[{]/);
  if (open < 0) return undefined;
  const close = body[open] === '{' ? body.lastIndexOf('}') : body.lastIndexOf(']');
  return close > open ? body.slice(open, close + 1) : undefined;
}

export function parseJsonReply<T>(reply: string, schema: z.ZodType<T>): JsonReply<T> {
  const text = jsonText(reply);
  if (text === undefined) return { ok: false, problem: 'the reply contains no JSON object' };
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    return { ok: false, problem: `the JSON does not parse: ${(error as Error).message}` };
  }
  const result = schema.safeParse(parsed);
  if (!result.success) {
    const issues = result.error.issues
      .slice(0, 5)
      .map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`);
    return { ok: false, problem: `the JSON does not match the schema: ${issues.join('; ')}` };
  }
  return { ok: true, value: result.data };
}

/** The schema as JSON Schema, for `response_format`. */
export function jsonSchemaOf(schema: z.ZodType<unknown>): Record<string, unknown> {
  return z.toJSONSchema(schema, { unrepresentable: 'any', io: 'input' }) as Record<string, unknown>;
}

/** The schema as JSON Schema text, for telling the model what a repaired reply must look like. */
export function describeSchema(schema: z.ZodType<unknown>): string {
  return JSON.stringify(jsonSchemaOf(schema));
}
