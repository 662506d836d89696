import { headingAnchor, type ParsedFile } from './parsed-file.js';

/**
 * Markdown as it is written: a leading "# Title" line is the title, not text (kept in the text
 * it would be repeated inside every answer sentence that quotes the first chunk), and every
 * later ATX heading starts a section named by its anchor.
 */
export function parseMarkdown(source: string): ParsedFile {
  const heading = /^\s*#\s+(.+)\r?\n/.exec(source);
  const title = heading?.[1]?.trim();
  const text = heading ? source.slice(heading[0].length).trim() : source;
  const sections = [...text.matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)]
    .map((match) => ({ start: match.index, fragment: headingAnchor(match[1] ?? '') }))
    .filter((section) => section.fragment !== '');
  return { ...(title ? { title } : {}), text, sections };
}
