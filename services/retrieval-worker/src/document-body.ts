import type { DurableStream } from '@hopline/bus';
import { subjects, UnavailableError, ValidationError, type IngestCommand__Output } from '@hopline/contracts';

/** How long a body's parts may take to be read before the command is retried. */
const READ_TIMEOUT_MS = 30_000;

/**
 * The command with its document's body in `text`: a body published in parts ahead of the
 * command (see Document.body_id) is read back from the body stream and joined. Other commands
 * come back as they are.
 */
export async function withDocumentBody(
  bodies: DurableStream,
  command: IngestCommand__Output,
  timeoutMs = READ_TIMEOUT_MS,
): Promise<IngestCommand__Output> {
  const document = command.upsert;
  const expected = document?.bodyParts ?? 0;
  if (!document || expected === 0) return command;
  if (!document.bodyId)
    throw new ValidationError(`document ${document.docId} has ${expected} body parts but no body id`);
  const subject = subjects.documentBody(document.tenantId, document.kbId, document.bodyId);
  const reading = new AbortController();
  const timer = setTimeout(() => reading.abort(), timeoutMs);
  const parts: Uint8Array[] = [];
  try {
    for await (const message of bodies.follow(subject, { signal: reading.signal })) {
      parts.push(message.data);
      if (parts.length === expected) break;
    }
  } finally {
    clearTimeout(timer);
    reading.abort();
  }
  if (parts.length < expected) {
    // The parts are stored before the command is published: a short read is the bus's delay.
    throw new UnavailableError(
      `document ${document.docId}: read ${parts.length} of its ${expected} body parts within ${timeoutMs} ms`,
    );
  }
  const text = Buffer.concat(parts).toString('utf8');
  return { ...command, upsert: { ...document, text } };
}
