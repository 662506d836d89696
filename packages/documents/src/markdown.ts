import { headingAnchor, type ParsedFile } from './parsed-file.js';

/**
 * Markdown as it is written: a leading "# Title" line is the title, not text (kept in the text
 * it would be repeated inside every answer sentence that quotes the first chunk), and every
 * later ATX heading starts a section named by its anchor.
 *
 * The gateway parses uploads on its event loop, so no pattern here may backtrack more than
 * linearly: after the "#"s comes one whitespace character that is not a line break (a class
 * that overlaps nothing before or after it), the rest of the line is taken whole, and its
 * closing "#"s are stripped by hand. A "#" alone on its line is an empty heading, never one
 * named by the line after it.
 */
export function parseMarkdown(source: string): ParsedFile {
  const heading = /^\s*#[^\S\n\r\u2028\u2029](.*)\r?\n/.exec(source);
  const title = heading?.[1]?.trim();
  const text = heading && title ? source.slice(heading[0].length).trim() : source;
  const sections = [...text.matchAll(/^#{1,6}[^\S\n\r\u2028\u2029](.*)$/gm)]
    .map((match) => ({ start: match.index, fragment: headingAnchor(withoutClosingSequence(match[1] ?? '')) }))
    .filter((section) => section.fragment !== '');
  return { ...(title ? { title } : {}), text, sections };
}

/** A heading's text without the optional closing "#"s ("## Setup ##" is "Setup"). */
function withoutClosingSequence(heading: string): string {
  let end = heading.trimEnd().length;
  while (end > 0 && heading[end - 1] === '#') end--;
  return heading.slice(0, end).trimEnd();
}
