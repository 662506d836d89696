import { extname } from 'node:path';
import type { Multipart } from '@fastify/multipart';
import { documentIdFrom, parseDocument } from '@hopline/documents';
import { problemDocument, problems, type Problem, type ProblemDocument } from '../problem.js';
import { publish, type AcceptedDocument, type IngestTarget } from './accept-documents.js';

export interface RefusedFile {
  file: string;
  problem: ProblemDocument;
}

/**
 * Files uploaded as multipart/form-data, parsed with the CLI's parsers (PDF, DOCX, HTML,
 * markdown, text) one at a time as they arrive: only the file being read is held, within
 * INGEST_MAX_DOCUMENT_BYTES. A file that cannot be ingested (too large, corrupt, a scan without
 * text, an unknown type) is refused on its own with a problem; the others go in. The document
 * id comes from the file name, as `pnpm ingest` makes it.
 */
export async function acceptUploadedFiles(
  target: IngestTarget,
  parts: AsyncIterable<Multipart>,
  maxDocumentBytes: number,
): Promise<{ accepted: AcceptedDocument[]; refused: RefusedFile[] }> {
  const accepted: AcceptedDocument[] = [];
  const refused: RefusedFile[] = [];
  for await (const part of parts) {
    if (part.type !== 'file') continue;
    const file = part.filename;
    const refuse = (problem: Problem) => refused.push({ file, problem: problemDocument(problem) });
    // Past the limit the rest of the file is skipped, not held: the file is refused alone.
    const data = await part.toBuffer();
    if (part.file.truncated) {
      refuse(problems.payloadTooLarge(maxDocumentBytes, 'INGEST_MAX_DOCUMENT_BYTES', `the file "${file}"`));
      continue;
    }
    let document;
    try {
      const parsed = await parseDocument(file, data);
      document = {
        docId: documentIdFrom(file),
        title: parsed.title ?? file.slice(0, file.length - extname(file).length),
        text: parsed.text,
        sourceUri: file,
        ...(parsed.sections.length > 0 ? { sections: parsed.sections } : {}),
      };
    } catch (error) {
      refuse(problems.unreadableDocument(`${file}: ${(error as Error).message}`));
      continue;
    }
    accepted.push(await publish(target, document));
  }
  return { accepted, refused };
}
