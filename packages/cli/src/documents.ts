import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
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

/**
 * A document id from a file name (or a JSONL id): it must survive as a NATS message id and a
 * URL segment, so only ASCII letters, digits, "_", ".", ":" and "-" are kept. A name with
 * other letters (天穹项目.md) would lose them all, so it gets a hash of the whole name: names
 * that differ only outside ASCII keep different ids, and the same name always the same id.
 */
export function documentIdFrom(name: string): string {
  const stem = name.normalize('NFC').replace(/\.[^.]+$/, '');
  const ascii = stem.replace(/[^A-Za-z0-9_.:-]+/g, '-').replace(/^-+|-+$/g, '');
  const id = /\P{ASCII}/u.test(stem)
    ? `${ascii.slice(0, 180) || 'doc'}-${createHash('sha256').update(stem).digest('hex').slice(0, 12)}`
    : ascii.slice(0, 200);
  if (id === '' || id === '.' || id === '..') {
    throw new Error(`"${name}" gives no usable document id ("${id}"): name it with a letter or digit`);
  }
  return id;
}

/** Every supported file under a folder (or the one file), as documents, each id once. */
export function loadDocuments(path: string): DocumentInput[] {
  if (!existsSync(path)) throw new Error(`${path}: no such file or folder`);
  const stat = statSync(path);
  const files = stat.isDirectory() ? listFiles(path) : [path];
  const sources = new Map<string, string>();
  return files.flatMap((file) => {
    const name = stat.isDirectory() ? relative(path, file) : basename(file);
    const documents = fileDocuments(file, name);
    for (const { docId } of documents) {
      const earlier = sources.get(docId);
      // Ingesting both would keep only the last: refuse rather than lose one silently.
      if (earlier) throw new Error(`document id "${docId}" comes from both ${earlier} and ${name}: rename one`);
      sources.set(docId, name);
    }
    return documents;
  });
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
