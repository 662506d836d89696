import { headingAnchor, type ParsedFile } from './parsed-file.js';

/**
 * Markdown as it is written: a leading "# Title" line is the title, not text (kept in the text
 * it would be repeated inside every answer sentence that quotes the first chunk), and every
 * later ATX heading outside fenced code starts a section named by its anchor.
 *
 * The gateway parses uploads on its event loop, so no pattern here may backtrack more than
 * linearly: after the "#"s comes one whitespace character that is not a line break (a class
 * that overlaps nothing before or after it), the rest of the line is taken whole, and its
 * closing "#"s are stripped by hand. A "#" alone on its line is an empty heading, never one
 * named by the line after it. A fence line's marker is followed by the rest of its line, which
 * always ends where the line does, so nothing is tried twice.
 */
export function parseMarkdown(source: string): ParsedFile {
  const heading = /^\s*#[^\S\n\r\u2028\u2029](.*)\r?\n/.exec(source);
  const title = heading?.[1]?.trim();
  const text = heading && title ? source.slice(heading[0].length).trim() : source;
  const inCode = fencedCode(text);
  const sections = [...text.matchAll(/^#{1,6}[^\S\n\r\u2028\u2029](.*)$/gm)]
    .filter((match) => !inCode(match.index))
    .map((match) => ({ start: match.index, fragment: headingAnchor(withoutClosingSequence(match[1] ?? '')) }))
    .filter((section) => section.fragment !== '');
  return { ...(title ? { title } : {}), text, sections };
}

/**
 * Whether an offset, asked in increasing order, lies in a fenced code block ("```" or "~~~",
 * closed by a line of at least as many of the same and nothing else; one left open runs to the
 * end), where a "#" line is a shell or Python comment, not a heading.
 */
function fencedCode(text: string): (offset: number) => boolean {
  const blocks: Array<{ start: number; end: number }> = [];
  let open: { marker: string; start: number } | undefined;
  for (const match of text.matchAll(/^ {0,3}(`{3,}|~{3,})([^\n]*)$/gm)) {
    const [line, marker = '', rest = ''] = match;
    if (!open) open = { marker, start: match.index };
    else if (marker[0] === open.marker[0] && marker.length >= open.marker.length && rest.trim() === '') {
      blocks.push({ start: open.start, end: match.index + line.length });
      open = undefined;
    }
  }
  if (open) blocks.push({ start: open.start, end: text.length });
  let next = 0;
  return (offset) => {
    while (next < blocks.length && (blocks[next] as { end: number }).end <= offset) next++;
    return next < blocks.length && (blocks[next] as { start: number }).start <= offset;
  };
}

/** A heading's text without the optional closing "#"s ("## Setup ##" is "Setup"). */
function withoutClosingSequence(heading: string): string {
  let end = heading.trimEnd().length;
  while (end > 0 && heading[end - 1] === '#') end--;
  return heading.slice(0, end).trimEnd();
}
