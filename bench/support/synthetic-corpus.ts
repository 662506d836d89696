/**
 * The synthetic documents of the ingestion and restart benches: 80 words each from a
 * 4,000-word vocabulary, drawn by a deterministic generator, so every run (and both benches)
 * indexes the same documents.
 */
export function* syntheticWords(seed = 12_345): Generator<string> {
  let state = seed >>> 0 || 1;
  for (;;) {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    yield `w${(state >>> 0) % 4_000}`;
  }
}

/** The next document's text from the stream. */
export function syntheticText(stream: Generator<string>): string {
  return Array.from({ length: 80 }, () => stream.next().value as string).join(' ');
}
