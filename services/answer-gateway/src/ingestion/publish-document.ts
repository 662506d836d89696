import { randomUUID } from 'node:crypto';
import type { DurableStream } from '@hopline/bus';
import {
  codecs,
  DOCUMENT_BODY_PART_BYTES,
  ingestMessageId,
  splitDocumentBody,
  subjects,
  type Document,
} from '@hopline/contracts';

export interface DocumentStreams {
  /** The durable ingest stream the retrieval workers apply. */
  ingest: DurableStream;
  /** Where a body too large for one message goes ahead of its command. */
  bodies: DurableStream;
}

export type OutgoingDocument = Omit<Document, 'tenantId' | 'kbId' | 'version' | 'bodyParts' | 'bodyId'> & {
  docId: string;
  text: string;
  version: number;
};

/**
 * Publishes one document's upsert. A body over DOCUMENT_BODY_PART_BYTES goes first, in parts,
 * to a subject of its own on the body stream, and the command names it; the command is
 * published last, so a worker never meets a command whose body is not stored yet. Each upload
 * gets a fresh body id: a retry that comes after a partial upload never mixes its parts with
 * the earlier ones.
 */
export async function publishDocument(
  streams: DocumentStreams,
  tenantId: string,
  kbId: string,
  document: OutgoingDocument,
): Promise<{ duplicate: boolean }> {
  const utf8 = Buffer.from(document.text, 'utf8');
  let body: Pick<Document, 'text' | 'bodyParts' | 'bodyId'> = { text: document.text };
  if (utf8.length > DOCUMENT_BODY_PART_BYTES) {
    const bodyId = randomUUID();
    const parts = splitDocumentBody(utf8);
    const subject = subjects.documentBody(tenantId, kbId, bodyId);
    for (const [index, part] of parts.entries()) {
      await streams.bodies.publish(subject, part, { msgId: `body/${bodyId}/${index}` });
    }
    body = { text: '', bodyParts: parts.length, bodyId };
  }
  const result = await streams.ingest.publish(
    subjects.ingest(tenantId, kbId),
    codecs.ingestCommand.encode({ upsert: { ...document, ...body, tenantId, kbId } }),
    { msgId: ingestMessageId('upsert', tenantId, kbId, document.docId, document.version) },
  );
  return { duplicate: result.duplicate };
}
