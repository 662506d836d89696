import { getDocument } from 'pdfjs-dist/legacy/build/pdf.mjs';
import type { PDFDocumentProxy, TextItem } from 'pdfjs-dist/types/src/display/api.js';
import { UnreadableFileError, type ParsedFile } from './parsed-file.js';

/**
 * A PDF's text layer, page by page: each page is a section `page=N` (the PDF open parameter,
 * so a citation's source opens at its page). A PDF with pages but no text is a scan without
 * OCR: it is refused, never ingested empty.
 */
export async function parsePdf(data: Uint8Array): Promise<ParsedFile> {
  let pdf;
  try {
    // Fonts are not rendered, only their text read: no font loading, no eval.
    pdf = await getDocument({ data, isEvalSupported: false, disableFontFace: true, verbosity: 0 }).promise;
  } catch (error) {
    throw new UnreadableFileError(`not a readable PDF (${(error as Error).message})`);
  }
  try {
    const sections: ParsedFile['sections'] = [];
    let text = '';
    for (let number = 1; number <= pdf.numPages; number++) {
      const content = await pageText(pdf, number);
      if (content === '') continue;
      if (text !== '') text += '\n\n';
      sections.push({ start: text.length, fragment: `page=${number}` });
      text += content;
    }
    if (text === '') {
      throw new UnreadableFileError(
        `a PDF of ${pdf.numPages} page(s) without a text layer (a scan?): run OCR on it first`,
      );
    }
    const info = (await pdf.getMetadata().catch(() => undefined))?.info as { Title?: unknown } | undefined;
    const title = typeof info?.Title === 'string' && info.Title.trim() ? info.Title.trim() : undefined;
    return { ...(title ? { title } : {}), text, sections };
  } finally {
    await pdf.destroy();
  }
}

/**
 * One page's text. What pdf.js throws reading a page (a broken content stream, a missing
 * object) is the file's fault as much as a header it cannot open: the file is unreadable.
 */
async function pageText(pdf: PDFDocumentProxy, number: number): Promise<string> {
  try {
    const page = await pdf.getPage(number);
    const content = await page.getTextContent();
    page.cleanup();
    return content.items
      .filter((item): item is TextItem => 'str' in item)
      .map((item) => item.str + (item.hasEOL ? '\n' : ''))
      .join('')
      .trim();
  } catch (error) {
    throw new UnreadableFileError(`not a readable PDF: page ${number} (${(error as Error).message})`);
  }
}
