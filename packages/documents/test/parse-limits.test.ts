import { flateBombPdf, makeDocx, makePdf, manyEntriesZip, zipBombDocx } from '@hopline/test-support';
import { describe, expect, it } from 'vitest';
import { UnavailableError } from '@hopline/contracts';
import { parseDocument, UnreadableFileError } from '../src/index.js';

const MiB = 1024 * 1024;

/**
 * What `work` settles to, and how the event loop fared meanwhile: the longest a 5 ms interval
 * waited between runs (a parse on the event loop stops it for the whole parse).
 */
async function whileTicking(work: () => Promise<unknown>) {
  let last = performance.now();
  let longestGap = 0;
  const ticker = setInterval(() => {
    const now = performance.now();
    longestGap = Math.max(longestGap, now - last);
    last = now;
  }, 5);
  const started = performance.now();
  try {
    const outcome = await work().then(
      (value) => ({ value }),
      (error: unknown) => ({ error }),
    );
    // A loop stopped from the last run to the end counts too, however few runs came before.
    longestGap = Math.max(longestGap, performance.now() - last);
    return { outcome, longestGap, elapsedMs: performance.now() - started };
  } finally {
    clearInterval(ticker);
  }
}

/** The CPU time this process (all its threads, parse workers included) spends in the next `ms`. */
async function cpuMsOver(ms: number): Promise<number> {
  const before = process.cpuUsage();
  await new Promise((resolve) => setTimeout(resolve, ms));
  const { user, system } = process.cpuUsage(before);
  return (user + system) / 1000;
}

/** A DOCX that mammoth takes seconds over, and some 150 MiB of heap: one of 20,000 paragraphs. */
const slowDocx = () =>
  makeDocx(
    Array.from({ length: 20_000 }, (_, i): [string, string] => [
      i % 50 === 0 ? 'Heading1' : 'Normal',
      `Paragraph ${i} of the manual says something about pumps, valves and gaskets.`,
    ]),
  );

/** A PDF that pdf.js takes seconds over: 4 pages of 50,000 lines (makePdf is slow to write many pages). */
const slowPdf = () =>
  makePdf(
    Array.from({ length: 4 }, (_, page) =>
      Array.from({ length: 50_000 }, (_, line) => `Line ${line} of page ${page} about pumps and valves.`).join('\n'),
    ),
  );

describe('document parsers - limits on a PDF or DOCX', () => {
  it.each([
    ['headers that declare its size', true],
    ['headers that lie about its size', false],
  ])(
    'limits - a zip-bomb DOCX (300 MiB of XML in under 1 MiB) with %s is refused as one, and the event loop keeps running meanwhile',
    async (_, honestSizes) => {
      // The same writer's small DOCX parses: what refuses the bomb is its size.
      const small = await parseDocument('small.docx', await zipBombDocx(100_000));
      expect(small.text.split('\n').slice(0, 2)).toEqual(['boom', 'boom']);
      const bomb = await zipBombDocx(300 * MiB, { honestSizes });
      expect(bomb.length).toBeLessThan(MiB);
      const { outcome, longestGap, elapsedMs } = await whileTicking(() => parseDocument('bomb.docx', bomb));
      expect(outcome).toEqual({ error: expect.any(UnreadableFileError) as unknown });
      expect((outcome as { error: Error }).error.message).toBe(
        'a DOCX that unpacks to more than 128 MiB (a zip bomb?): split it into smaller documents',
      );
      // Refused by its size, well before the time limit (20 s); mammoth on the event loop would
      // have unpacked all 300 MiB there and parsed it as XML, stopping every other request.
      expect(elapsedMs).toBeLessThan(10_000);
      expect(longestGap).toBeLessThan(250);
    },
    60_000,
  );

  it('limits - a DOCX of more entries than any document has is refused before they are counted one by one', async () => {
    await expect(parseDocument('entries.docx', await manyEntriesZip(10_001))).rejects.toThrow(
      new UnreadableFileError('not a readable DOCX (more than 10000 entries)'),
    );
  }, 60_000);

  it.each([
    ['DOCX', 'slow.docx', slowDocx],
    ['PDF', 'slow.pdf', async () => slowPdf()],
  ])(
    'limits - a %s past its time is refused at its deadline, its worker terminated, and the next file parses',
    async (kind, name, make) => {
      const file = await make();
      const { outcome, longestGap, elapsedMs } = await whileTicking(() =>
        parseDocument(name, file, { timeoutMs: 1_000 }),
      );
      expect(outcome).toEqual({ error: expect.any(UnreadableFileError) as unknown });
      expect((outcome as { error: Error }).error.message).toBe(
        `a ${kind} too complex to parse within 1 s: split it into smaller documents`,
      );
      expect(elapsedMs).toBeGreaterThanOrEqual(990);
      expect(elapsedMs).toBeLessThan(2_000);
      expect(longestGap).toBeLessThan(250);
      // A worker left parsing would keep a core busy for seconds more.
      expect(await cpuMsOver(1_000)).toBeLessThan(400);
      await expect(parseDocument('after.pdf', makePdf(['Still parsing.']))).resolves.toMatchObject({
        text: 'Still parsing.',
      });
    },
    60_000,
  );

  it('limits - a PDF whose stream inflates past the memory a parse may take (outside the heap) is stopped there, and the next file parses', async () => {
    const pdf = await flateBombPdf(600 * MiB);
    expect(pdf.length).toBeLessThan(MiB);
    const before = process.memoryUsage.rss();
    let peak = before;
    const watch = setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), 10);
    try {
      await expect(parseDocument('bomb.pdf', pdf, { maxMemoryMb: 100, timeoutMs: 30_000 })).rejects.toThrow(
        new UnreadableFileError('a PDF too large to parse within 100 MiB of memory: split it into smaller documents'),
      );
    } finally {
      clearInterval(watch);
    }
    // pdf.js would have held all 600 MiB (and more while it grew its buffer): the heap cap does
    // not count it.
    expect(peak - before).toBeLessThan(400 * MiB);
    await expect(parseDocument('after.pdf', makePdf(['Still parsing.']))).resolves.toMatchObject({
      text: 'Still parsing.',
    });
  }, 60_000);

  it('limits - files that find the parser busy wait their turn within their time; past four waiting, or past its time, a file is refused for now (unavailable, with a wait to retry after), not as unreadable', async () => {
    const slow = await slowDocx();
    // Holds the slot; how it ends is not the point (on a loaded machine it may run out of time
    // before the waits below are done), so its outcome is taken at once.
    const running = parseDocument('slow.docx', slow, { timeoutMs: 3_000 }).catch(() => undefined);
    const waiting = Array.from({ length: 3 }, (_, i) => parseDocument(`wait-${i}.pdf`, makePdf([`File ${i}.`])));
    const late = parseDocument('late.pdf', makePdf(['Too late.']), { timeoutMs: 100 });
    const refusedNow = (file: string) =>
      parseDocument(file, makePdf(['No room.'])).then(
        () => undefined,
        (error: unknown) => error,
      );
    const refused = await refusedNow('fifth.pdf');
    expect(refused).toBeInstanceOf(UnavailableError);
    expect((refused as UnavailableError).message).toBe('the document parser is busy: 4 files are waiting for it');
    expect((refused as UnavailableError).retryAfterMs).toBeGreaterThan(0);
    // A file whose time runs out while it waits is refused the same way, and leaves the queue.
    await expect(late).rejects.toMatchObject({
      name: 'UnavailableError',
      message: 'the document parser is busy: the file waited for it past its time',
    });
    expect(await refusedNow('sixth.pdf')).toBeUndefined();
    await running;
    expect((await Promise.all(waiting)).map((parsed) => parsed.text)).toEqual([0, 1, 2].map((i) => `File ${i}.`));
  }, 60_000);

  it('limits - a DOCX past the heap its worker may take is refused as too large, and the next file parses', async () => {
    const docx = await slowDocx();
    await expect(parseDocument('big.docx', docx, { maxHeapMb: 32, timeoutMs: 30_000 })).rejects.toThrow(
      new UnreadableFileError('a DOCX too large to parse within 32 MiB of heap: split it into smaller documents'),
    );
    await expect(parseDocument('after.pdf', makePdf(['Still parsing.']))).resolves.toMatchObject({
      text: 'Still parsing.',
    });
  }, 60_000);
});

describe('document parsers - limits on an HTML page', () => {
  /** A flat page of about 10 MB, which takes node-html-parser seconds. */
  const bigPage = () =>
    new TextEncoder().encode(
      `<body>${'<p>Some paragraph text about pumps and valves <b>bold</b> more.</p>'.repeat(150_000)}</body>`,
    );

  it('limits - a large HTML page is parsed off the event loop, which keeps running meanwhile', async () => {
    const { outcome, longestGap } = await whileTicking(() => parseDocument('big.html', bigPage()));
    expect((outcome as { value?: { text: string } }).value?.text).toMatch(/^Some paragraph text about pumps/);
    expect(longestGap).toBeLessThan(250);
  }, 60_000);

  it('limits - an HTML page past its time is stopped and refused as too complex', async () => {
    await expect(parseDocument('big.html', bigPage(), { timeoutMs: 100 })).rejects.toThrow(
      new UnreadableFileError('an HTML page too complex to parse within 0.1 s: split it into smaller documents'),
    );
  }, 60_000);

  it('limits - an HTML page nested tens of thousands deep is refused as unreadable, not a stack overflow', async () => {
    const depth = 100_000;
    const html = `<html><body>${'<div>'.repeat(depth)}deep text${'</div>'.repeat(depth)}</body></html>`;
    await expect(parseDocument('deep.html', new TextEncoder().encode(html))).rejects.toThrow(
      new UnreadableFileError('an HTML page nested too deeply to read'),
    );
    // The worker that refused it parses the next page.
    const next = await parseDocument('next.html', new TextEncoder().encode('<p>after</p>'));
    expect(next.text).toBe('after');
  }, 60_000);
});
