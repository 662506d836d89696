/** A file's text as a document, with where its pages or sections begin. */
export interface ParsedFile {
  /** The file's own title (an HTML <title>, a DOCX title, a leading "# " line); else none. */
  title?: string;
  text: string;
  /** In order of `start`: chunks starting at or after `start` cite `sourceUri#fragment`. */
  sections: Array<{ start: number; fragment: string }>;
}

/** A file that was read but has nothing to ingest, with the reason a person can act on. */
export class UnreadableFileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UnreadableFileError';
  }
}

/** A file's bytes as UTF-8 text; an UnreadableFileError when they are not. */
export function decodeUtf8(data: Uint8Array): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(data);
  } catch {
    throw new UnreadableFileError('not UTF-8 text');
  }
}

/**
 * The anchor a heading gets, as GitHub and most site generators make it: lower case, spaces to
 * "-", punctuation dropped (letters of every script kept).
 */
export function headingAnchor(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s+/g, '-')
    .slice(0, 200);
}
