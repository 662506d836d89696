import { createHash } from 'node:crypto';

/** A document id from a file name: the name without its extension, made safe as `safeDocumentId` makes it. */
export function documentIdFrom(fileName: string): string {
  return safeId(fileName.normalize('NFC').replace(/\.[^.]+$/, ''), fileName);
}

/**
 * A document id as a JSONL line gives it, made safe, with every "." kept: "faq.1" and "faq.2"
 * are two documents, "www.example.com" one. An id must survive as a NATS message id and a URL
 * segment, so only ASCII letters, digits, "_", ".", ":" and "-" are kept. An id with other
 * letters (天穹项目) would lose them all, so it gets a hash of the whole id: ids that differ only
 * outside ASCII keep different ids, and the same id always the same one.
 */
export function safeDocumentId(id: string): string {
  return safeId(id.normalize('NFC'), id);
}

function safeId(stem: string, given: string): string {
  const ascii = stem.replace(/[^A-Za-z0-9_.:-]+/g, '-').replace(/^-+|-+$/g, '');
  const id = /\P{ASCII}/u.test(stem)
    ? `${ascii.slice(0, 180) || 'doc'}-${createHash('sha256').update(stem).digest('hex').slice(0, 12)}`
    : ascii.slice(0, 200);
  if (id === '' || id === '.' || id === '..') {
    throw new Error(`"${given}" gives no usable document id ("${id}"): name it with a letter or digit`);
  }
  return id;
}
