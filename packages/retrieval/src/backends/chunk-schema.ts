import { z } from 'zod';
import type { IndexedChunk } from './types.js';

/** Validates a chunk read back from a persisted log or a remote store. */
export const indexedChunkSchema = z.object({
  chunkId: z.string().min(1),
  tenantId: z.string().min(1),
  kbId: z.string().min(1),
  docId: z.string().min(1),
  docVersion: z.number().int().nonnegative(),
  title: z.string(),
  text: z.string(),
  span: z.object({ start: z.number().int().nonnegative(), end: z.number().int().nonnegative() }),
  dedupeKey: z.string().min(1),
  effectiveDate: z.string(),
  sourceUri: z.string(),
  lexicalText: z.string().optional(),
  entities: z.array(z.string()).optional(),
}) satisfies z.ZodType<IndexedChunk>;
