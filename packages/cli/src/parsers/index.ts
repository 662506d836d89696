import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { extname } from 'node:path';
import { parseHtml } from './html.js';
import { parseMarkdown } from './markdown.js';
import type { ParsedFile } from './parsed-file.js';

export { UnreadableFileError, type ParsedFile } from './parsed-file.js';

/** Files of text, parsed from their text as they are read. */
const TEXT_PARSERS: Record<string, (text: string) => ParsedFile> = {
  '.txt': (text) => ({ text, sections: [] }),
  '.md': parseMarkdown,
  '.markdown': parseMarkdown,
  '.html': parseHtml,
  '.htm': parseHtml,
};

const PARSERS: Record<string, (path: string) => Promise<ParsedFile>> = {
  ...Object.fromEntries(
    Object.entries(TEXT_PARSERS).map(([extension, parse]) => [
      extension,
      async (path: string) => parse(await readFile(path, 'utf8')),
    ]),
  ),
  // pdf.js and mammoth are large: loaded only when a folder has such a file.
  '.pdf': async (path) => (await import('./pdf.js')).parsePdf(new Uint8Array(await readFile(path))),
  '.docx': async (path) => (await import('./docx.js')).parseDocx(await readFile(path)),
};

/** The extensions `parseFile` reads (JSONL, a list of documents, is read apart). */
export const PARSED_EXTENSIONS = new Set(Object.keys(PARSERS));

/** The extensions `parseTextFile` reads. */
export const TEXT_EXTENSIONS = new Set(Object.keys(TEXT_PARSERS));

/** A file of text (not PDF or DOCX) parsed at once, for callers that cannot wait. */
export function parseTextFile(path: string): ParsedFile {
  const parser = TEXT_PARSERS[extname(path).toLowerCase()];
  if (!parser) throw new Error(`${path}: not a file of text`);
  return parser(readFileSync(path, 'utf8'));
}

/** A file's text and sections, by its extension. */
export function parseFile(path: string): Promise<ParsedFile> {
  const parser = PARSERS[extname(path).toLowerCase()];
  if (!parser) throw new Error(`${path}: no parser for "${extname(path)}"`);
  return parser(path);
}
