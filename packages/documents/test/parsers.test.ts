import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { makeDocx, makePdf } from '@hopline/test-support';
import { describe, expect, it } from 'vitest';
import { parseDocument, UnreadableFileError, type ParsedFile } from '../src/index.js';

/** A file as an upload or a folder gives it: its name (which says its type) and its bytes. */
const file = (name: string, content: string | Buffer) => ({
  name,
  data: typeof content === 'string' ? Buffer.from(content) : content,
});
const parseFile = ({ name, data }: { name: string; data: Buffer }) => parseDocument(name, data);

/**
 * The title and sections `parseMarkdown` gives each source, parsed in a child process killed after
 * `timeoutMs`: a regex that backtracks blocks the event loop, where no test timeout could fire.
 */
function parseMarkdownInChild(sources: string[], timeoutMs: number): Promise<Array<Omit<ParsedFile, 'text'>>> {
  const markdown = new URL('../src/markdown.ts', import.meta.url).href;
  const script = `const { parseMarkdown } = await import(${JSON.stringify(markdown)});
    let input = '';
    for await (const chunk of process.stdin) input += chunk;
    const parsed = JSON.parse(input).map((source) => parseMarkdown(source));
    console.log(JSON.stringify(parsed.map(({ title, sections }) => ({ title, sections }))));`;
  return new Promise((resolve, reject) => {
    const child = execFile(
      process.execPath,
      ['--import', 'tsx', '--input-type=module', '--eval', script],
      { cwd: fileURLToPath(new URL('.', import.meta.url)), timeout: timeoutMs },
      (error, stdout) => {
        if (error) reject(error.killed ? new Error(`still parsing after ${timeoutMs} ms`) : error);
        else resolve(JSON.parse(stdout) as Array<Omit<ParsedFile, 'text'>>);
      },
    );
    child.stdin?.end(JSON.stringify(sources));
  });
}

describe('document parsers', () => {
  it('parse - a PDF gives its text page by page, each page a section named for the PDF open parameter', async () => {
    const parsed = await parseFile(
      file('manual.pdf', makePdf(['Installing the pump.\nOpen the valve (slowly).', '', 'Servicing the pump.'])),
    );
    expect(parsed.text).toBe('Installing the pump.\nOpen the valve (slowly).\n\nServicing the pump.');
    // The empty page 2 starts no section: the text of page 3 cites page 3.
    expect(parsed.sections).toEqual([
      { start: 0, fragment: 'page=1' },
      { start: parsed.text.indexOf('Servicing'), fragment: 'page=3' },
    ]);
  });

  it('parse - a scanned PDF without a text layer is refused as such, never ingested empty', async () => {
    const scan = file('scan.pdf', makePdf(['', ''], { textLayer: false }));
    await expect(parseFile(scan)).rejects.toThrow(UnreadableFileError);
    await expect(parseFile(scan)).rejects.toThrow(
      'a PDF of 2 page(s) without a text layer (a scan?): run OCR on it first',
    );
  });

  it('parse - a corrupt PDF is refused with a clear error', async () => {
    const corrupt = file('corrupt.pdf', Buffer.concat([makePdf(['Hello.']).subarray(0, 40), Buffer.from('garbage')]));
    await expect(parseFile(corrupt)).rejects.toThrow(/^not a readable PDF/);
  });

  it('parse - a PDF whose later page pdf.js cannot read is refused as unreadable, naming the page: the file is at fault, not the parser', async () => {
    // Page 2's entry in the page tree points at an object the file does not hold.
    const pdf = makePdf(['Installing the pump.', 'Servicing the pump.'])
      .toString('latin1')
      .replace(/\/Kids \[(\d+) 0 R \d+ 0 R\]/, '/Kids [$1 0 R 99 0 R]');
    const broken = file('broken.pdf', Buffer.from(pdf, 'latin1'));
    await expect(parseFile(broken)).rejects.toThrow(UnreadableFileError);
    await expect(parseFile(broken)).rejects.toThrow(/^not a readable PDF: page 2 \(/);
  });

  it('parse - an HTML page gives its title and main text, without navigation, scripts or footer, headings as sections', async () => {
    const parsed = await parseFile(
      file(
        'page.html',
        `<!doctype html><html><head><title>Pump guide</title><style>p{color:red}</style></head><body>
         <nav><a href="/">Home</a></nav><main><h1 id="intro">Introduction</h1><p>The pump moves   water.</p>
         <h2>Safety &amp; care</h2><p>Wear gloves.<script>track()</script></p></main><footer>© 2026</footer></body></html>`,
      ),
    );
    expect(parsed.title).toBe('Pump guide');
    expect(parsed.text).toBe('Introduction\nThe pump moves water.\nSafety & care\nWear gloves.');
    expect(parsed.sections).toEqual([
      { start: 0, fragment: 'intro' },
      { start: parsed.text.indexOf('Safety'), fragment: 'safety-care' },
    ]);
  });

  it('parse - an HTML table keeps its cells apart: a row is one line, its cells never run into one word', async () => {
    const parsed = await parseFile(
      file(
        'pumps.html',
        `<body><table><tr><th>Pump</th><th>Flow</th></tr><tr><td>P-100</td><td>40 l/min</td></tr></table></body>`,
      ),
    );
    expect(parsed.text).toBe('Pump Flow\nP-100 40 l/min');
  });

  it('parse - a DOCX gives its text, its title and its headings as sections', async () => {
    const parsed = await parseFile(
      file(
        'policy.docx',
        await makeDocx([
          ['Title', 'Travel policy'],
          ['Normal', 'Employees book economy class.'],
          ['Heading1', 'Long flights'],
          ['Normal', 'Flights over six hours may be business class.'],
        ]),
      ),
    );
    expect(parsed.title).toBe('Travel policy');
    expect(parsed.text).toBe(
      'Travel policy\nEmployees book economy class.\nLong flights\nFlights over six hours may be business class.',
    );
    expect(parsed.sections.map((section) => section.fragment)).toEqual(['travel-policy', 'long-flights']);
  });

  it('parse - a file that is not a DOCX is refused with a clear error', async () => {
    await expect(parseFile(file('fake.docx', 'plain text'))).rejects.toThrow(/^not a readable DOCX/);
  });

  it('parse - markdown: a leading "# " line is the title, later headings are sections', async () => {
    const parsed = await parseFile(file('guide.md', '# Guide\n\nIntro.\n\n## Installing it\n\nSteps.\n'));
    expect(parsed).toEqual({
      title: 'Guide',
      text: 'Intro.\n\n## Installing it\n\nSteps.',
      sections: [{ start: 8, fragment: 'installing-it' }],
    });
  });

  it('parse - markdown: a "#" comment in a fenced code block is code, not a section', async () => {
    const text = [
      '## Install',
      '```bash',
      '# fetch the dependencies',
      'pnpm install',
      '```',
      '~~~~python',
      '# a comment',
      '~~~',
      '## Still code',
      '~~~~',
      '## Run',
      'pnpm start',
    ].join('\n');
    const parsed = await parseFile(file('guide.md', text));
    expect(parsed.sections).toEqual([
      { start: 0, fragment: 'install' },
      { start: text.indexOf('## Run'), fragment: 'run' },
    ]);
  });

  it('parse - markdown: lines of millions of spaces after a "#" are read in one pass, not backtracked over for hours', async () => {
    const spaces = ' '.repeat(4_000_000);
    // Patterns with overlapping quantifiers took cubic time on the first (days at this size)
    // and quadratic time on the second, a title line without its line break (hours); the
    // gateway parses uploads on its event loop, where that stops every other request.
    const parsed = await parseMarkdownInChild(
      [`Intro.\n## Setup${spaces}steps ##${spaces}\n`, `#${spaces}Guide`],
      30_000,
    );
    expect(parsed).toEqual([
      { sections: [{ start: 7, fragment: 'setup-steps' }] },
      { sections: [{ start: 0, fragment: 'guide' }] },
    ]);
  }, 60_000);
});
