import { jetstream, subjects } from './subjects.js';

/**
 * The most UTF-8 bytes of document text one bus message carries: NATS refuses messages over
 * its max_payload (1 MiB by default), and the command around the text needs room as well.
 */
export const DOCUMENT_BODY_PART_BYTES = 512 * 1024;

/** Where bodies too large for one message travel (see Document.body_id). */
export const documentBodyStream = {
  name: jetstream.documentBodyStream,
  subjects: [subjects.documentBodyAll],
};

/**
 * Splits UTF-8 text into parts of at most `maxBytes` bytes, each cut before a character's first
 * byte, so that every part decodes on its own and their concatenation is the text.
 */
export function splitDocumentBody(utf8: Uint8Array, maxBytes = DOCUMENT_BODY_PART_BYTES): Uint8Array[] {
  if (maxBytes < 4) throw new RangeError('a part must hold at least one character (4 bytes)');
  const parts: Uint8Array[] = [];
  let start = 0;
  while (utf8.length - start > maxBytes) {
    let end = start + maxBytes;
    // 10xxxxxx continues a character: back up to the byte that starts it.
    while (((utf8[end] as number) & 0xc0) === 0x80) end--;
    parts.push(utf8.subarray(start, end));
    start = end;
  }
  parts.push(utf8.subarray(start));
  return parts;
}
