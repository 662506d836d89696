import { parse, type HTMLElement, type Node } from 'node-html-parser';
import { headingAnchor, UnreadableFileError, type ParsedFile } from './parsed-file.js';

/** Page furniture and code: never a page's main text. */
const SKIPPED = new Set(['script', 'style', 'noscript', 'template', 'nav', 'header', 'footer', 'aside', 'form', 'svg']);
const BLOCK = /^(p|div|section|article|main|li|ul|ol|table|tr|blockquote|pre|h[1-6]|dd|dt|figcaption|br|hr)$/;
const HEADING = /^h([1-6])$/;
// A table cell ends its text with a space: a row stays one line (its cells read together, as
// a row says one thing), and no cell runs into the next ("P-100" and "40" are not "P-10040").
const CELL = /^(td|th)$/;

/**
 * An HTML page's title and main text: the <main> (else <article>, else <body>) without
 * navigation, headers, footers, asides and scripts, one line per block. Every heading starts a
 * section named by its id, or by the anchor its text would get.
 */
export function parseHtml(html: string): ParsedFile {
  try {
    return readPage(html);
  } catch (error) {
    // The parser and the walk recurse per level of nesting: a page nested some tens of
    // thousands deep takes the stack.
    if (error instanceof RangeError) throw new UnreadableFileError('an HTML page nested too deeply to read');
    throw error;
  }
}

function readPage(html: string): ParsedFile {
  const root = parse(html, { comment: false, blockTextElements: { script: false, style: false, noscript: false } });
  const main = root.querySelector('main') ?? root.querySelector('article') ?? root.querySelector('body') ?? root;
  const title = root.querySelector('title')?.text.trim() || main.querySelector('h1')?.text.trim() || undefined;
  const sections: ParsedFile['sections'] = [];
  let text = '';
  let line = '';
  const endLine = () => {
    const trimmed = line.replace(/\s+/g, ' ').trim();
    line = '';
    if (trimmed === '') return;
    text += (text === '' ? '' : '\n') + trimmed;
  };
  const walk = (node: Node) => {
    if (node.nodeType === 3) {
      line += (node as unknown as { text: string }).text;
      return;
    }
    if (node.nodeType !== 1) return;
    const element = node as HTMLElement;
    const tag = element.rawTagName?.toLowerCase() ?? '';
    if (SKIPPED.has(tag)) return;
    const block = BLOCK.test(tag);
    if (block) endLine();
    if (HEADING.test(tag)) {
      const fragment = element.id || headingAnchor(element.text);
      if (fragment) sections.push({ start: text === '' ? 0 : text.length + 1, fragment });
    }
    element.childNodes.forEach(walk);
    if (CELL.test(tag)) line += ' ';
    if (block) endLine();
  };
  walk(main);
  endLine();
  if (text === '') throw new UnreadableFileError('an HTML page without text');
  // A heading with nothing after it begins no chunk: drop those past the end.
  return { ...(title ? { title } : {}), text, sections: sections.filter((section) => section.start < text.length) };
}
