import { z } from 'zod';
import { kbIdSchema, type Principal } from './api-keys.js';
import { docIdSchema } from './document-id.js';
import { problems } from './problem.js';

export const HARD_MAX_HOPS = 5;
/**
 * A character that shows: not white space, a format character (zero-width space and joiners,
 * the BOM, direction marks), a control, a lone combining mark, or a blank that renders empty
 * (Hangul fillers, the braille blank).
 */
const VISIBLE = /[^\p{White_Space}\p{Cf}\p{Cc}\p{Mn}\p{Me}\u115F\u1160\u3164\uFFA0\u2800]/u;
/** A selection is a handful of documents: each is scored exactly, and each id travels in every retrieve message. */
const MAX_SELECTED_DOCUMENTS = 100;
/** Kbs one ask may name; more is no question a person asks, and each id is repeated in refusals. */
const MAX_NAMED_KBS = 100;

export interface AskLimits {
  maxQuestionChars: number;
}

/** The body of POST /v1/ask. Unknown fields are refused so that typos do not pass silently. */
export function askBodySchema(limits: AskLimits) {
  return z
    .object({
      question: z
        .string()
        // The limits apply once trimmed, which an input schema cannot state: its documentation does.
        .meta({
          description: `1 to ${limits.maxQuestionChars} characters once leading and trailing whitespace is trimmed, not all of them invisible`,
        })
        .transform((value) => value.trim())
        .pipe(
          z
            .string()
            .min(1, 'question is empty')
            .max(limits.maxQuestionChars, `question is longer than ${limits.maxQuestionChars} characters`)
            .refine((question) => VISIBLE.test(question), 'question has only invisible characters'),
        ),
      kbIds: z.array(kbIdSchema).min(1).max(MAX_NAMED_KBS).optional(),
      // Narrows retrieval to these documents of the kbs read; ids outside them match nothing.
      docIds: z.array(docIdSchema).min(1).max(MAX_SELECTED_DOCUMENTS).optional(),
      maxHops: z.number().int().min(1).max(HARD_MAX_HOPS).optional(),
    })
    .strict();
}

export type AskBody = z.infer<ReturnType<typeof askBodySchema>>;

// Building a zod schema costs more than using it; one per question length limit is enough.
const schemas = new Map<number, ReturnType<typeof askBodySchema>>();

export function parseAskBody(raw: unknown, limits: AskLimits): AskBody {
  let schema = schemas.get(limits.maxQuestionChars);
  if (!schema) {
    schema = askBodySchema(limits);
    schemas.set(limits.maxQuestionChars, schema);
  }
  const result = schema.safeParse(raw);
  if (result.success) return result.data;
  const detail = result.error.issues
    .map((issue) => (issue.path.length > 0 ? `${issue.path.join('.')}: ${issue.message}` : issue.message))
    .join('; ');
  throw problems.invalidRequest(detail);
}

/** The kbs a question reads: the requested ones, each of which the key must allow. */
export function resolveKbScope(principal: Principal, requested: readonly string[] | undefined): string[] {
  if (!requested) return [...principal.kbIds];
  const outside = requested.filter((kbId) => !principal.kbIds.includes(kbId));
  if (outside.length > 0)
    throw problems.forbidden(`this key may not read ${outside.map((kb) => `"${kb}"`).join(', ')}`);
  return [...new Set(requested)];
}
