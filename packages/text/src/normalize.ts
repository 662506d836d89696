import { createHash } from 'node:crypto';

const COMBINING_DIACRITICS = /[\u0300-\u036f]/g;
// eslint-disable-next-line no-control-regex
const NON_ASCII = /[^\u0000-\u007f]/;

/**
 * Folds full-width forms and Latin diacritics ("Mýa" → "Mya", "１２" → "12") so that a query
 * typed without them still matches. Pure ASCII, the common case, skips the Unicode work.
 */
export function foldText(text: string): string {
  if (!NON_ASCII.test(text)) return text;
  return text.normalize('NFKD').replace(COMBINING_DIACRITICS, '').normalize('NFC');
}

/** Lower case without width forms or diacritics: "Mýa" and "mya" read the same. */
export function fold(text: string): string {
  return foldText(text).toLowerCase();
}

/** Case, width, diacritics and whitespace folded: two texts that read the same compare equal. */
export function normalizeText(text: string): string {
  return foldText(text).toLowerCase().replace(/\s+/g, ' ').trim();
}

/** A stable hex digest of the whole string (not a prefix of it). */
export function hashText(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 32);
}
