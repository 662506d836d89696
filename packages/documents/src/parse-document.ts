import { extname } from 'node:path';
import { parseHtml } from './html.js';
import { parseMarkdown } from './markdown.js';
import { DEFAULT_PARSE_LIMITS, parseInWorker, type ParseLimits } from './parse-in-worker.js';
import { decodeUtf8, UnreadableFileError, type ParsedFile } from './parsed-file.js';

/** Files of text, parsed from their text. */
const TEXT_PARSERS: Record<string, (text: string) => ParsedFile> = {
  '.txt': (text) => ({ text, sections: [] }),
  '.md': parseMarkdown,
  '.markdown': parseMarkdown,
  '.html': parseHtml,
  '.htm': parseHtml,
};

const PARSERS: Record<string, (data: Uint8Array, limits: ParseLimits) => Promise<ParsedFile>> = {
  ...Object.fromEntries(
    Object.entries(TEXT_PARSERS).map(([extension, parse]) => [
      extension,
      (data: Uint8Array) => Promise.resolve(parse(decodeUtf8(data))),
    ]),
  ),
  // A small PDF or DOCX can take minutes or gigabytes to parse (a zip bomb, a pathological
  // PDF), and a large HTML page seconds (a 10 MB one about 2 s): they are parsed in a worker
  // thread, bounded in time and memory, and the caller's event loop goes on serving.
  '.pdf': (data, limits) => parseInWorker('pdf', data, limits),
  '.docx': (data, limits) => parseInWorker('docx', data, limits),
  '.html': (data, limits) => parseInWorker('html', data, limits),
  '.htm': (data, limits) => parseInWorker('html', data, limits),
};

/** The extensions `parseDocument` reads: PDF, DOCX, HTML, markdown and plain text. */
export const DOCUMENT_EXTENSIONS = new Set(Object.keys(PARSERS));

/** The extensions `parseTextDocument` reads (all but PDF and DOCX). */
export const TEXT_EXTENSIONS = new Set(Object.keys(TEXT_PARSERS));

/**
 * A file's text and the sections its citations name, by the extension of its name. A file that
 * cannot be read as its type, or holds no text, is an UnreadableFileError saying why; so is a
 * PDF, DOCX or HTML page past `limits` (by default DEFAULT_PARSE_LIMITS).
 */
export async function parseDocument(
  fileName: string,
  data: Uint8Array,
  limits: Partial<ParseLimits> = {},
): Promise<ParsedFile> {
  const parser = PARSERS[extname(fileName).toLowerCase()];
  if (!parser) throw new UnreadableFileError(`no parser for "${extname(fileName)}" files`);
  const parsed = await parser(data, { ...DEFAULT_PARSE_LIMITS, ...limits });
  if (parsed.text.trim() === '') throw new UnreadableFileError('no text to ingest');
  return parsed;
}

/** A file of text (not PDF or DOCX) parsed at once, for callers that cannot wait. */
export function parseTextDocument(fileName: string, text: string): ParsedFile {
  const parser = TEXT_PARSERS[extname(fileName).toLowerCase()];
  if (!parser) throw new Error(`${fileName}: not a file of text`);
  return parser(text);
}
