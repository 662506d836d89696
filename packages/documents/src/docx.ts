import mammoth from 'mammoth';
import { parseHtml } from './html.js';
import { UnreadableFileError, type ParsedFile } from './parsed-file.js';
import { checkUnpackedSize } from './zip-size.js';

/**
 * A DOCX's text, read through its HTML rendering so that Word's headings become sections as an
 * HTML page's do; the first "Title" or heading 1 paragraph is its title. A DOCX whose parts
 * unpack to more than `maxUnpackedBytes` is refused before mammoth unpacks any.
 */
export async function parseDocx(data: Buffer, maxUnpackedBytes: number): Promise<ParsedFile> {
  await checkUnpackedSize(data, maxUnpackedBytes, 'DOCX');
  let html: string;
  try {
    html = (await mammoth.convertToHtml({ buffer: data }, { styleMap: ["p[style-name='Title'] => h1:fresh"] })).value;
  } catch (error) {
    throw new UnreadableFileError(`not a readable DOCX (${(error as Error).message})`);
  }
  return parseHtml(`<body>${html}</body>`);
}
