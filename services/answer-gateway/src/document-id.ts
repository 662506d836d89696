import { z } from 'zod';

/** A document id as clients name it: in ingest bodies, delete paths and an ask's `docIds`. */
export const docIdSchema = z
  .string()
  .regex(/^[A-Za-z0-9_.:-]{1,200}$/, 'docId must be 1-200 letters, digits, "_", ".", ":" or "-"')
  // URLs resolve "." and ".." away: a document with such an id could never be deleted.
  .refine((docId) => docId !== '.' && docId !== '..', 'docId cannot be "." or ".."');
