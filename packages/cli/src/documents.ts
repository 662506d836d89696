import { readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, extname, join, relative } from 'node:path';
import { z } from 'zod';

/** A document as the gateway's ingestion API takes it. */
export interface DocumentInput {
  docId: string;
  title: string;
  text: string;
  version: number;
  sourceUri?: string;
  effectiveDate?: string;
}

const jsonlLineSchema = z
  .object({
    docId: z.string().min(1).optional(),
    id: z.string().min(1).optional(),
    title: z.string().default(''),
    text: z.string().min(1),
    version: z.number().int().positive().optional(),
    effectiveDate: z.string().optional(),
    sourceUri: z.string().optional(),
  })
  .refine((line) => line.docId ?? line.id, 'each line needs a "docId" (or "id")');

const SUPPORTED = new Set(['.txt', '.md', '.markdown', '.jsonl']);

/** Document ids must survive as NATS message ids and URL segments. */
export function documentIdFrom(name: string): string {
  return (
    name
      .replace(/\.[^.]+$/, '')
      .replace(/[^A-Za-z0-9_.:-]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 200) || 'doc'
  );
}

/** Every supported file under a folder (or the one file), as documents. */
export function loadDocuments(path: string): DocumentInput[] {
  const stat = statSync(path);
  const files = stat.isDirectory() ? listFiles(path) : [path];
  return files.flatMap((file) => fileDocuments(file, stat.isDirectory() ? relative(path, file) : basename(file)));
}

function listFiles(folder: string): string[] {
  return readdirSync(folder, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && SUPPORTED.has(extname(entry.name).toLowerCase()))
    .map((entry) => join(entry.parentPath, entry.name))
    .sort();
}

function fileDocuments(file: string, name: string): DocumentInput[] {
  const text = readFileSync(file, 'utf8');
  // The file's modification time is its version: re-ingesting an unchanged file is a no-op,
  // an edited one replaces the older version.
  const version = Math.floor(statSync(file).mtimeMs);
  if (extname(file).toLowerCase() === '.jsonl') {
    return text
      .split('\n')
      .map((line, index) => ({ line: line.trim(), index }))
      .filter(({ line }) => line.length > 0)
      .map(({ line, index }) => {
        let parsed: unknown;
        try {
          parsed = JSON.parse(line);
        } catch (error) {
          throw new Error(`${name}:${index + 1}: not JSON (${(error as Error).message})`);
        }
        const result = jsonlLineSchema.safeParse(parsed);
        if (!result.success)
          throw new Error(`${name}:${index + 1}: ${result.error.issues.map((i) => i.message).join('; ')}`);
        const doc = result.data;
        return {
          docId: documentIdFrom(doc.docId ?? doc.id ?? ''),
          title: doc.title,
          text: doc.text,
          version: doc.version ?? version,
          ...(doc.effectiveDate ? { effectiveDate: doc.effectiveDate } : {}),
          ...(doc.sourceUri ? { sourceUri: doc.sourceUri } : {}),
        };
      });
  }
  // A leading "# Title" line is the document's title, not part of its text: kept in the text
  // it would be repeated inside every answer sentence that quotes the first chunk.
  const heading = /^\s*#\s+(.+)\r?\n/.exec(text);
  const title = heading?.[1]?.trim() ?? basename(file, extname(file));
  const body = heading ? text.slice(heading[0].length).trim() : text;
  return [{ docId: documentIdFrom(name), title, text: body, version, sourceUri: name }];
}
