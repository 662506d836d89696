export interface WrittenAnswer {
  text: string;
  /** Evidence numbers the emitted text cites, in first-cited order. */
  cited: number[];
  /** Numbers the writer cited that name no evidence: removed, and their sentences dropped. */
  rejected: number[];
  /** Sentences dropped because their only support was a citation that named no evidence. */
  droppedSentences: number;
}

const CITATION_GROUP = /\[(\d+(?:\s*,\s*\d+)*)\]/g;
// A sentence ends at . ! ? and its citation markers, once whitespace follows (so "3." of a
// streamed "3.5" is not cut), or at a Chinese full stop, which needs none.
const SENTENCE_END = /[.!?](?:\s*\[\d+(?:\s*,\s*\d+)*\])*(?=\s)|[。！？](?:\[\d+(?:\s*,\s*\d+)*\])*/g;

/**
 * Streams an answer sentence by sentence, checking every [n] against the evidence as it goes:
 * a citation that names no evidence is removed, and a sentence whose only citations were such
 * is not sent at all — every claim the reader sees resolves to a real chunk.
 */
export async function writeAnswer(
  deltas: AsyncIterable<string>,
  evidenceNumbers: ReadonlySet<number>,
  send: (text: string) => Promise<void>,
): Promise<WrittenAnswer> {
  const cited: number[] = [];
  const rejected: number[] = [];
  let droppedSentences = 0;
  let text = '';
  let pending = '';

  const release = async (sentence: string) => {
    const numbers = [...sentence.matchAll(CITATION_GROUP)].flatMap((match) => (match[1] as string).split(',').map((n) => Number(n.trim())));
    const valid = numbers.filter((n) => evidenceNumbers.has(n));
    for (const n of numbers) if (!evidenceNumbers.has(n) && !rejected.includes(n)) rejected.push(n);
    if (numbers.length > 0 && valid.length === 0) {
      droppedSentences += 1;
      return;
    }
    const cleaned = sentence.replace(CITATION_GROUP, (_group, list: string) => {
      const kept = list.split(',').map((n) => Number(n.trim())).filter((n) => evidenceNumbers.has(n));
      return kept.map((n) => `[${n}]`).join('');
    });
    for (const n of valid) if (!cited.includes(n)) cited.push(n);
    if (cleaned.trim() === '') return;
    const piece = text === '' ? cleaned.trimStart() : cleaned;
    text += piece;
    await send(piece);
  };

  for await (const delta of deltas) {
    pending += delta;
    let cut = 0;
    SENTENCE_END.lastIndex = 0;
    for (const match of pending.matchAll(SENTENCE_END)) cut = match.index + match[0].length;
    if (cut === 0) continue;
    const complete = pending.slice(0, cut);
    pending = pending.slice(cut);
    // Several sentences may have arrived at once; each is checked on its own.
    for (const sentence of complete.split(/(?<=[.!?。！？](?:\s*\[\d+(?:\s*,\s*\d+)*\])*)(?=\s)/)) await release(sentence);
  }
  if (pending.trim() !== '') await release(pending);
  return { text, cited, rejected, droppedSentences };
}
