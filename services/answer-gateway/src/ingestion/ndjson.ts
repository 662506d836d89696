import { problems } from '../problem.js';

export interface NdjsonLine {
  /** 1-based, counting blank lines too, as an editor numbers them. */
  number: number;
  text: string;
}

/**
 * The lines of a streamed body, one at a time: only the line being read is held, never the
 * body, and a line longer than `maxLineBytes` is refused as soon as it is, without reading on.
 * Blank lines are skipped.
 */
export async function* readNdjsonLines(
  body: AsyncIterable<Buffer>,
  maxLineBytes: number,
  limitName: string,
): AsyncGenerator<NdjsonLine> {
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let number = 0;
  const tooLong = () => problems.payloadTooLarge(maxLineBytes, limitName, `the document on line ${number + 1}`);
  const finish = (tail: Buffer): NdjsonLine | undefined => {
    const text = Buffer.concat([...pending, tail]).toString('utf8');
    pending = [];
    pendingBytes = 0;
    number++;
    return text.trim() === '' ? undefined : { number, text };
  };
  for await (const chunk of body) {
    let start = 0;
    for (let newline = chunk.indexOf(0x0a); newline !== -1; newline = chunk.indexOf(0x0a, start)) {
      if (pendingBytes + newline - start > maxLineBytes) throw tooLong();
      const line = finish(chunk.subarray(start, newline));
      start = newline + 1;
      if (line) yield line;
    }
    pendingBytes += chunk.length - start;
    if (pendingBytes > maxLineBytes) throw tooLong();
    if (start < chunk.length) pending.push(chunk.subarray(start));
  }
  const last = finish(Buffer.alloc(0));
  if (last) yield last;
}
