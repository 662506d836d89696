const COUNTED = /[\u3400-\u9fff\uf900-\ufaff]|[\p{L}\p{N}]+/gu;

/**
 * Approximates a model tokenizer's count without one: a Latin word or a Han character is one
 * token. Close enough to size chunks and token budgets; not a billing figure.
 */
export function approximateTokens(text: string): number {
  let count = 0;
  for (const _ of text.matchAll(COUNTED)) count++;
  return count;
}
