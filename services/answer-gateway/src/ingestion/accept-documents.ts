import { z } from 'zod';
import { docIdSchema } from '../document-id.js';
import { isBusUnavailable, toHoplineError } from '@hopline/contracts';
import { Problem, problems, toProblem } from '../problem.js';
import { readNdjsonLines } from './ndjson.js';
import { publishDocument, type DocumentStreams } from './publish-document.js';
import { versionNow } from './version-clock.js';

/** One document as ingestion takes it: a JSON body, an item of `documents`, or one NDJSON line. */
export const documentSchema = z
  .object({
    docId: docIdSchema,
    title: z.string().max(1_000).default(''),
    // Text of whitespace alone would be indexed as a chunk no query finds, as a file without text is refused.
    text: z.string().regex(/\S/, 'text is empty or only whitespace'),
    version: z.number().int().positive().optional(),
    effectiveDate: z.string().date().optional(),
    sourceUri: z.string().max(2_000).optional(),
    metadata: z.record(z.string(), z.string()).optional(),
    /** Where a parsed file's pages or sections begin: their chunks cite `sourceUri#fragment`. */
    sections: z
      .array(
        z.object({
          start: z.number().int().nonnegative(),
          fragment: z.string().regex(/^[^\s#]{1,200}$/, 'a fragment is 1-200 characters without spaces or "#"'),
        }),
      )
      .max(100_000)
      .optional(),
  })
  .strict()
  .refine(
    (document) =>
      (document.sections ?? []).every(
        (section, i, all) => section.start <= document.text.length && (i === 0 || section.start > all[i - 1]!.start),
      ),
    { message: 'sections must start in increasing order within the text', path: ['sections'] },
  );
type DocumentInput = z.infer<typeof documentSchema>;
export const jsonBodySchema = z.union([
  documentSchema,
  z.object({ documents: z.array(documentSchema).min(1).max(1_000) }).strict(),
]);

export interface AcceptedDocument {
  docId: string;
  version: number;
  duplicate: boolean;
}

/** Publishes this many documents of a stream at once: the stream's round trips overlap. */
const PUBLISH_WINDOW = 32;

/** The NDJSON media types (`application/x-ndjson` and the two other names JSON Lines goes by). */
export const NDJSON_TYPES = /^application\/(?:x-ndjson|jsonl|x-jsonlines)\s*(?:;|$)/i;

const issues = (error: z.ZodError) => error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');

/** Where documents are accepted into: the streams, and the tenant's kb. */
export interface IngestTarget {
  streams: DocumentStreams;
  tenantId: string;
  kbId: string;
}

/** Publishes one validated document, stamped with the current time when it names no version. */
export async function publish(target: IngestTarget, document: DocumentInput): Promise<AcceptedDocument> {
  const { sections, ...fields } = document;
  const version = document.version ?? versionNow(target.tenantId, target.kbId, document.docId);
  try {
    const { duplicate } = await publishDocument(target.streams, target.tenantId, target.kbId, {
      ...fields,
      version,
      ...(sections ? { layout: { sections } } : {}),
    });
    return { docId: document.docId, version, duplicate };
  } catch (error) {
    throw ingestRefusal(error);
  }
}

/**
 * A write the ingest stream did not take, as the 503 with Retry-After that `pnpm ingest` and
 * other clients retry: the bus unreachable, the stream without a leader (a cluster electing one
 * takes seconds) or not answering in time. Anything else passes as it is.
 */
export function ingestRefusal(error: unknown): unknown {
  if (isBusUnavailable(error)) return toProblem(error);
  const failure = toHoplineError(error);
  if (failure.code === 'unavailable' || failure.code === 'deadline_exceeded')
    return problems.unavailable(`the ingest stream did not take the write: ${failure.message}`, 1_000);
  return error;
}

/** One document or `{ documents: [...] }`, a JSON body read whole within one document's limit. */
export async function acceptJsonDocuments(target: IngestTarget, body: unknown): Promise<AcceptedDocument[]> {
  const parsed = jsonBodySchema.safeParse(body);
  if (!parsed.success) throw problems.invalidRequest(issues(parsed.error));
  const documents = 'documents' in parsed.data ? parsed.data.documents : [parsed.data];
  documents.forEach((document) => refuseFutureVersion(document));
  const accepted: AcceptedDocument[] = [];
  try {
    for (const document of documents) accepted.push(await publish(target, document));
  } catch (error) {
    throw withDetailAdded(error, `the first ${accepted.length} document(s) were accepted, the rest not`);
  }
  return accepted;
}

/**
 * Any number of documents as NDJSON, one per line, read and published as they arrive, several at
 * once. A bad line stops the request with a problem that says which line and how many documents
 * before it were accepted (they stay accepted); so does a publish that failed, counting the
 * documents before the first that failed, though some after it may have gone in beside it.
 */
export async function acceptNdjsonDocuments(
  target: IngestTarget,
  body: AsyncIterable<Buffer>,
  maxDocumentBytes: number,
): Promise<AcceptedDocument[]> {
  const accepted: AcceptedDocument[] = [];
  const inFlight = new Set<Promise<void>>();
  // A publish may fail while the loop waits for the body's next bytes, when nothing awaits it:
  // its failure is kept here at once (an unhandled rejection would end the process) and
  // thrown at the loop's next step.
  // The first document whose publish failed, by its place among the documents read.
  let failed: { error: unknown; place: number } | undefined;
  const throwIfFailed = () => {
    if (failed) throw failed.error;
  };
  let read = 0;
  try {
    for await (const line of readNdjsonLines(body, maxDocumentBytes, 'INGEST_MAX_DOCUMENT_BYTES')) {
      throwIfFailed();
      const document = parseLine(line.text, line.number);
      const place = read++;
      const publishing: Promise<void> = publish(target, document)
        .then(
          (entry) => void accepted.push(entry),
          (error: unknown) => {
            if (failed === undefined || place < failed.place) failed = { error, place };
          },
        )
        .finally(() => inFlight.delete(publishing));
      inFlight.add(publishing);
      if (inFlight.size >= PUBLISH_WINDOW) await Promise.race(inFlight);
    }
    await Promise.all(inFlight);
    throwIfFailed();
  } catch (error) {
    await Promise.allSettled(inFlight);
    // Publishes run side by side: the documents before the first that failed all went in, some
    // after it may have too. Sending one again is harmless (a later version of the same, or a
    // duplicate its message id names).
    if (failed === undefined) {
      throw withDetailAdded(error, `the ${read} document(s) before it were accepted, the rest was not read`);
    }
    throw withDetailAdded(
      failed.error,
      `the ${failed.place} document(s) before the first that failed were accepted, and some after it may have ` +
        'been: send it and those after it again',
    );
  }
  return accepted;
}

function parseLine(text: string, number: number): DocumentInput {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw problems.malformedJson(`line ${number}: ${(error as Error).message}`);
  }
  const parsed = documentSchema.safeParse(json);
  if (!parsed.success) throw problems.invalidRequest(`line ${number}: ${issues(parsed.error)}`);
  return refuseFutureVersion(parsed.data);
}

function refuseFutureVersion(document: DocumentInput): DocumentInput {
  const now = Date.now();
  if (document.version !== undefined && document.version > now) {
    throw problems.invalidRequest(
      `version ${document.version} of "${document.docId}" is ahead of the clock (${now} ms since the epoch): ` +
        'versions are ordered against the time of later ingests and deletes, which a future version would ' +
        'outrank; leave it out to get the current time',
    );
  }
  return document;
}

/** A request that failed part-way: the client must learn which of its documents went in. */
function withDetailAdded(error: unknown, accepted: string): unknown {
  if (!(error instanceof Problem)) return error;
  return error.withDetail(`${error.detail ?? error.title}; ${accepted}`);
}
