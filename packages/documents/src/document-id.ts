import { createHash } from 'node:crypto';

/**
 * A document id from a file name: it must survive as a NATS message id and a URL segment, so
 * only ASCII letters, digits, "_", ".", ":" and "-" are kept. A name with other letters
 * (天穹项目.md) would lose them all, so it gets a hash of the whole name: names that differ only
 * outside ASCII keep different ids, and the same name always the same id.
 */
export function documentIdFrom(name: string): string {
  const stem = name.normalize('NFC').replace(/\.[^.]+$/, '');
  const ascii = stem.replace(/[^A-Za-z0-9_.:-]+/g, '-').replace(/^-+|-+$/g, '');
  const id = /\P{ASCII}/u.test(stem)
    ? `${ascii.slice(0, 180) || 'doc'}-${createHash('sha256').update(stem).digest('hex').slice(0, 12)}`
    : ascii.slice(0, 200);
  if (id === '' || id === '.' || id === '..') {
    throw new Error(`"${name}" gives no usable document id ("${id}"): name it with a letter or digit`);
  }
  return id;
}
