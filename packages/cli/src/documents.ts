import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { basename, extname, join, relative } from 'node:path';
import { z } from 'zod';
import {
  DOCUMENT_EXTENSIONS,
  documentIdFrom,
  parseDocument,
  parseTextDocument,
  safeDocumentId,
  TEXT_EXTENSIONS,
  type ParsedFile,
} from '@hopline/documents';

/** A document as the gateway's ingestion API takes it. */
export interface DocumentInput {
  docId: string;
  title: string;
  text: string;
  version: number;
  sourceUri?: string;
  effectiveDate?: string;
  /** Where a parsed file's pages or sections begin: its chunks cite `sourceUri#fragment`. */
  sections?: ParsedFile['sections'];
}

/** A file to ingest, with its name relative to the folder given (its source and its id). */
export interface DocumentFile {
  path: string;
  name: string;
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

const SUPPORTED = new Set([...DOCUMENT_EXTENSIONS, '.jsonl']);

/**
 * Every supported file under each folder (or each file), sorted within a folder. Two files whose
 * names give the same document id, from one folder or two, are refused before anything is sent:
 * ingesting both would keep only the last.
 */
export function listDocumentFiles(...paths: string[]): DocumentFile[] {
  const files = paths.flatMap((path) => {
    if (!existsSync(path)) throw new Error(`${path}: no such file or folder`);
    const isFolder = statSync(path).isDirectory();
    return (isFolder ? listFiles(path) : [path]).map((file) => ({
      path: file,
      name: isFolder ? relative(path, file) : basename(file),
    }));
  });
  const sources = new Map<string, string>();
  for (const { name } of files) {
    if (extname(name).toLowerCase() === '.jsonl') continue;
    const docId = documentIdFrom(name);
    const earlier = sources.get(docId);
    if (earlier) throw new Error(`document id "${docId}" comes from both ${earlier} and ${name}: rename one`);
    sources.set(docId, name);
  }
  return files;
}

/**
 * Every document of every file of text (text, markdown, HTML, JSONL; PDF and DOCX are left to
 * `pnpm ingest`), each id once; the first unreadable file is an error. At once, for callers that
 * cannot wait: the demo corpus, benchmarks and tests.
 */
export function loadDocuments(path: string): DocumentInput[] {
  const documents: DocumentInput[] = [];
  const sources = new Map<string, string>();
  const files = listDocumentFiles(path).filter((file) => {
    const extension = extname(file.path).toLowerCase();
    return extension === '.jsonl' || TEXT_EXTENSIONS.has(extension);
  });
  for (const file of files) {
    for (const document of documentsOf(file, () => parseTextDocument(file.path, readFileSync(file.path, 'utf8')))) {
      const earlier = sources.get(document.docId);
      if (earlier)
        throw new Error(`document id "${document.docId}" comes from both ${earlier} and ${file.name}: rename one`);
      sources.set(document.docId, file.name);
      documents.push(document);
    }
  }
  return documents;
}

function listFiles(folder: string): string[] {
  return readdirSync(folder, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && SUPPORTED.has(extname(entry.name).toLowerCase()))
    .map((entry) => join(entry.parentPath, entry.name))
    .sort();
}

/**
 * The documents of one file: a JSONL file's lines, or the file parsed by its type. A failure
 * names the file (and the line of a JSONL file).
 */
export async function readDocumentFile(file: DocumentFile): Promise<DocumentInput[]> {
  let parsed: ParsedFile | undefined;
  if (extname(file.path).toLowerCase() !== '.jsonl') {
    try {
      parsed = await parseDocument(file.path, await readFile(file.path));
    } catch (error) {
      throw new Error(`${file.name}: ${(error as Error).message}`);
    }
  }
  return documentsOf(file, () => parsed as ParsedFile);
}

function documentsOf({ path, name }: DocumentFile, parse: () => ParsedFile): DocumentInput[] {
  // The file's modification time is its version: re-ingesting an unchanged file is a no-op,
  // an edited one replaces the older version.
  const version = Math.floor(statSync(path).mtimeMs);
  if (extname(path).toLowerCase() === '.jsonl') return jsonlDocuments(readFileSync(path, 'utf8'), name, version);
  let parsed: ParsedFile;
  try {
    parsed = parse();
  } catch (error) {
    throw new Error(`${name}: ${(error as Error).message}`);
  }
  if (parsed.text.trim() === '') throw new Error(`${name}: no text to ingest`);
  return [
    {
      docId: documentIdFrom(name),
      title: parsed.title ?? basename(path, extname(path)),
      text: parsed.text,
      version,
      sourceUri: name,
      ...(parsed.sections.length > 0 ? { sections: parsed.sections } : {}),
    },
  ];
}

/**
 * The documents of a JSONL file, one per line. Two lines with the same id are refused, naming
 * both: the gateway would keep the first and drop the second as a duplicate.
 */
function jsonlDocuments(text: string, name: string, version: number): DocumentInput[] {
  const lineOf = new Map<string, number>();
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
      const docId = safeDocumentId(doc.docId ?? doc.id ?? '');
      const earlier = lineOf.get(docId);
      if (earlier !== undefined)
        throw new Error(
          `document id "${docId}" comes from both ${name}:${earlier} and ${name}:${index + 1}: rename one`,
        );
      lineOf.set(docId, index + 1);
      return {
        docId,
        title: doc.title,
        text: doc.text,
        version: doc.version ?? version,
        ...(doc.effectiveDate ? { effectiveDate: doc.effectiveDate } : {}),
        ...(doc.sourceUri ? { sourceUri: doc.sourceUri } : {}),
      };
    });
}
