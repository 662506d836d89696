import { ValidationError } from '@hopline/contracts';
import type { z } from 'zod';

/** Parses JSON lines against a schema; a bad line fails with its file and line number. */
export function parseJsonLines<T extends z.ZodType>(content: string, source: string, schema: T): Array<z.infer<T>> {
  const values: Array<z.infer<T>> = [];
  content.split('\n').forEach((line, index) => {
    if (line.trim().length === 0) return;
    let raw: unknown;
    try {
      raw = JSON.parse(line);
    } catch (error) {
      throw new ValidationError(`${source}:${index + 1}: not JSON: ${(error as Error).message}`);
    }
    const parsed = schema.safeParse(raw);
    if (!parsed.success) {
      const problems = parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ');
      throw new ValidationError(`${source}:${index + 1}: ${problems}`);
    }
    values.push(parsed.data);
  });
  return values;
}
