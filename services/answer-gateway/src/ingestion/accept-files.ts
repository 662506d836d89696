import { extname } from 'node:path';
import type { Multipart } from '@fastify/multipart';
import { UnavailableError } from '@hopline/contracts';
import { documentIdFrom, parseDocument, UnreadableFileError } from '@hopline/documents';
import { Problem, problemDocument, problems, type ProblemDocument } from '../problem.js';
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
 * id comes from the file name, as `pnpm ingest` makes it; a later file whose name gives an id an
 * earlier file of the upload took ("report.pdf" and "report.docx") is refused, not written over it.
 */
export async function acceptUploadedFiles(
  target: IngestTarget,
  parts: AsyncIterable<Multipart>,
  maxDocumentBytes: number,
): Promise<{ accepted: AcceptedDocument[]; refused: RefusedFile[] }> {
  const accepted: AcceptedDocument[] = [];
  const refused: RefusedFile[] = [];
  try {
    for await (const part of readingBody(parts)) await acceptPart(target, part, maxDocumentBytes, accepted, refused);
  } catch (error) {
    throw withFilesAccepted(error, accepted.length);
  }
  return { accepted, refused };
}

/** The parts, with what reading the body throws as the client's problem (`multipartProblem`). */
async function* readingBody(parts: AsyncIterable<Multipart>): AsyncGenerator<Multipart> {
  const iterator = parts[Symbol.asyncIterator]();
  for (;;) {
    const next = await iterator.next().catch((error: unknown) => {
      throw multipartProblem(error);
    });
    if (next.done) return;
    yield next.value;
  }
}

async function acceptPart(
  target: IngestTarget,
  part: Multipart,
  maxDocumentBytes: number,
  accepted: AcceptedDocument[],
  refused: RefusedFile[],
): Promise<void> {
  if (part.type !== 'file') return;
  const file = part.filename;
  const refuse = (problem: Problem) => refused.push({ file, problem: problemDocument(problem) });
  // Past the limit the rest of the file is skipped, not held: the file is refused alone.
  const data = await part.toBuffer().catch((error: unknown) => {
    throw multipartProblem(error);
  });
  if (part.file.truncated) {
    refuse(problems.payloadTooLarge(maxDocumentBytes, 'INGEST_MAX_DOCUMENT_BYTES', `the file "${file}"`));
    return;
  }
  let docId: string;
  try {
    docId = documentIdFrom(file);
  } catch (error) {
    refuse(problems.unreadableDocument(`${file}: ${(error as Error).message}`));
    return;
  }
  if (accepted.some((entry) => entry.docId === docId)) {
    refuse(
      problems.conflict(
        `the file "${file}" gives the document id "${docId}", which a file before it in this upload has: rename one of them`,
      ),
    );
    return;
  }
  let document;
  try {
    const parsed = await parseDocument(file, data);
    document = {
      docId,
      title: parsed.title ?? file.slice(0, file.length - extname(file).length),
      text: parsed.text,
      sourceUri: file,
      ...(parsed.sections.length > 0 ? { sections: parsed.sections } : {}),
    };
  } catch (error) {
    if (error instanceof UnreadableFileError) {
      refuse(problems.unreadableDocument(`${file}: ${error.message}`));
      return;
    }
    // Neither is the file's fault, so neither is a 422 blaming it: the upload stops there (the
    // files before it stay accepted). The parser busy is a 503 with Retry-After, as when the
    // ingest stream cannot take a write; a parser that failed on its own (its worker could not
    // start, or stopped without an answer) is a 500, logged for whoever runs the gateway.
    if (error instanceof UnavailableError) {
      throw problems.unavailable(`${file}: ${error.message}`, error.retryAfterMs);
    }
    throw problems.parserFailed(file, error);
  }
  accepted.push(await publish(target, document));
}

/**
 * What reading a multipart body failed on, as the client's problem, not a 500: a body that
 * closed before its end, more parts than it takes, a field named like a prototype property, or
 * one busboy cannot parse (no boundary, a part or the body cut short, a malformed part header:
 * errors without a code).
 */
function multipartProblem(error: unknown): Problem {
  const code = (error as { code?: unknown } | null)?.code;
  const message = error instanceof Error ? error.message : String(error);
  if (code === 'FST_MP_PREMATURE_CLOSE') return problems.clientClosedRequest();
  if (code === 'FST_PARTS_LIMIT' || code === 'FST_FILES_LIMIT' || code === 'FST_FIELDS_LIMIT')
    return new Problem(
      413,
      'payload-too-large',
      'Request body too large',
      `the upload has too many parts (${message})`,
    );
  if (code === 'FST_PROTO_VIOLATION') return problems.badRequest(message);
  return problems.badRequest(`the multipart body is malformed: ${message}`);
}

/** An upload that failed part-way: the client must learn how many files before it went in. */
function withFilesAccepted(error: unknown, accepted: number): unknown {
  if (!(error instanceof Problem) || accepted === 0) return error;
  const detail = `${error.detail ?? error.title}; the ${accepted} file(s) before it were accepted`;
  return error.withDetail(detail);
}
