const LETTER_OR_DIGIT = /[\p{L}\p{N}]/u;

function isHan(code: number): boolean {
  return (code >= 0x3400 && code <= 0x9fff) || (code >= 0xf900 && code <= 0xfaff);
}

/**
 * Approximates a model tokenizer's count without one: a run of letters and digits, or a single
 * Han character, is one token. Close enough to size chunks and token budgets; not a billing
 * figure. One pass over char codes (it runs on every ingested text), regex only past ASCII.
 */
export function approximateTokens(text: string): number {
  let count = 0;
  let inWord = false;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    let wordChar: boolean;
    if (code < 128) {
      wordChar = (code >= 48 && code <= 57) || (code >= 65 && code <= 90) || (code >= 97 && code <= 122);
    } else if (isHan(code)) {
      count++;
      inWord = false;
      continue;
    } else {
      wordChar = LETTER_OR_DIGIT.test(text[i] as string);
    }
    if (wordChar && !inWord) count++;
    inWord = wordChar;
  }
  return count;
}
