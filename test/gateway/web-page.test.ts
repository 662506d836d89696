import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { codecs } from '@hopline/contracts';
import { waitFor } from '@hopline/test-support';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { citationsFor, twoHopScript } from '../../services/answer-gateway/test/support/fake-reasoner.js';
import { startTestGateway } from '../../services/answer-gateway/test/support/harness.js';
import { hasChromium, launchChromium, requireTool, startDroppingProxy } from './support.js';

const enabled = requireTool('chromium', hasChromium(), 'apt-get install -y chromium');

/** Where the screenshot goes: HOPLINE_SCREENSHOT_DIR, else the system temp folder. */
const SCREENSHOT_DIR = process.env.HOPLINE_SCREENSHOT_DIR ?? join(tmpdir(), 'hopline-screenshots');

const ATLAS_QUESTION = 'Which department does the owner of project Atlas belong to?';

type TestGateway = Awaited<ReturnType<typeof startTestGateway>>;

/**
 * Asks the gated two-hop question as alice on the page at `url` and lets its first hop through:
 * resolves with the question id once hop 1's answer shows.
 */
async function askAtlasThroughHopOne(page: Page, t: TestGateway, url = t.baseUrl): Promise<string> {
  await page.goto(`${url}/`);
  await page.fill('#api-key', t.keys.alice.key);
  await page.fill('#question', ATLAS_QUESTION);
  await page.click('#ask');
  await page.waitForSelector('#route:not([hidden])');
  const questionId = (await waitFor(() => t.reasoner.asks[0]?.ctx?.questionId)) ?? '';
  t.reasoner.release(questionId);
  await page.waitForSelector('#hop-1 .hop-answer:has-text("Dana Reyes")');
  return questionId;
}

describe.skipIf(!enabled)('the web page at / in headless Chromium', () => {
  let browser: Browser;

  beforeAll(async () => {
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
  });

  it('renders each hop live, then the cited answer with clickable citations, the stop reason and timings', async () => {
    await using t = await startTestGateway({ script: twoHopScript({ gated: true }) });
    const page = await browser.newPage({ viewport: { width: 1100, height: 900 } });
    const pageErrors: string[] = [];
    page.on('pageerror', (error) => pageErrors.push(error.message));
    await page.goto(`${t.baseUrl}/`);
    await page.fill('#api-key', t.keys.alice.key);
    await page.fill('#question', ATLAS_QUESTION);
    await page.selectOption('#max-hops', '3');
    await page.click('#ask');

    // The script waits at a gate before each hop: the first hop shows while the second has not started.
    await page.waitForSelector('#route:not([hidden])');
    const questionId = (await waitFor(() => t.reasoner.asks[0]?.ctx?.questionId)) ?? '';
    t.reasoner.release(questionId);
    await page.waitForSelector('#hop-1 .hop-answer:has-text("Dana Reyes")');
    expect(await page.textContent('#hop-1 .hop-title')).toBe('hop 1/3 — Who owns project Atlas?');
    expect(await page.textContent('#hop-1 .hop-answer')).toContain('confidence 0.90');
    expect(await page.textContent('#hop-1 .hop-retrieval')).toContain('retrieved 8 chunks');
    expect(await page.locator('#hop-2').count()).toBe(0);

    await waitFor(
      async () => {
        t.reasoner.release(questionId);
        return (await page.textContent('#status')) === 'Answered.';
      },
      { timeoutMs: 15_000, description: 'the answer to render' },
    );
    expect(await page.textContent('#hop-2 .hop-title')).toBe('hop 2/3 — Which department does Dana Reyes belong to?');
    expect(await page.textContent('#answer')).toBe(
      'Project Atlas is owned by Dana Reyes [1], who works in the Materials Science department [2].',
    );
    expect(await page.locator('#answer a.cite').count()).toBe(2);
    const summary = (await page.textContent('#summary')) ?? '';
    expect(summary).toContain('stop: sufficient');
    expect(summary).toContain('hops: 2');
    expect(summary).toContain('total 25 ms');
    expect(summary).toContain('retrieve 12 ms');

    await page.click('#answer a.cite[data-index="2"]');
    await page.waitForSelector('#citation-detail:not([hidden])');
    expect(await page.textContent('#detail-snippet')).toBe('Dana Reyes works in the Materials Science department.');
    const meta = (await page.textContent('#detail-meta')) ?? '';
    expect(meta).toContain(`document ${t.keys.alice.tenantId}-people`);
    expect(meta).toContain('found in hop 2 via “Dana Reyes”');
    expect(await page.textContent('#detail-title')).toBe('[2] People directory');

    mkdirSync(SCREENSHOT_DIR, { recursive: true });
    const screenshot = join(SCREENSHOT_DIR, 'hopline-web-page.png');
    await page.screenshot({ path: screenshot, fullPage: true });
    console.log(`web page screenshot: ${screenshot}`);
    expect(pageErrors).toEqual([]);
    await page.close();
  });

  it('draws the evidence chain as a graph, live as each hop arrives, and says the same in text', async () => {
    await using t = await startTestGateway({ script: twoHopScript({ gated: true }) });
    const page = await browser.newPage({ viewport: { width: 1100, height: 900 } });
    const pageErrors: string[] = [];
    page.on('pageerror', (error) => pageErrors.push(error.message));
    await page.goto(`${t.baseUrl}/`);
    await page.fill('#api-key', t.keys.alice.key);
    const question = ATLAS_QUESTION;
    await page.fill('#question', question);
    await page.click('#ask');
    const rows = () => page.locator('#chain-text li').allTextContents();
    const edges = () =>
      page
        .locator('#chain-graph [data-edge]')
        .evaluateAll((paths) => paths.map((path) => path.getAttribute('data-edge')));

    await page.waitForSelector('#chain:not([hidden]) [data-node="question"]');
    expect(await rows()).toEqual([`question: ${question}`]);
    const questionId = (await waitFor(() => t.reasoner.asks[0]?.ctx?.questionId)) ?? '';
    expect(await page.textContent('#question-link')).toBe(questionId);

    // Hop 1 only: the chunk its answer cited (the citations that name its document come last),
    // then what it found; nothing of hop 2 yet.
    t.reasoner.release(questionId);
    await page.waitForSelector('#chain-graph [data-node="found-1"]');
    expect(await rows()).toEqual([
      `question: ${question}`,
      expect.stringMatching(/^hop 1 read: chunk \S+:atlas#0$/),
      'hop 1 found: Dana Reyes (confidence 0.90)',
    ]);
    expect(await page.locator('#chain-graph [data-node^="doc-2-"]').count()).toBe(0);

    await waitFor(
      async () => {
        t.reasoner.release(questionId);
        return (await page.textContent('#status')) === 'Answered.';
      },
      { timeoutMs: 15_000, description: 'the answer to render' },
    );
    const tenant = t.keys.alice.tenantId;
    expect(await rows()).toEqual([
      `question: ${question}`,
      `hop 1 read: Project Atlas (${tenant}) (document ${tenant}-atlas)`,
      'hop 1 found: Dana Reyes (confidence 0.90)',
      `hop 2 read: People directory (document ${tenant}-people)`,
      'hop 2 found: Materials Science (confidence 0.80)',
      'answer: Project Atlas is owned by Dana Reyes [1], who works in the Materials Science department [2].',
    ]);
    // Hop 2 starts from what hop 1 found (the bridge entity), not from the question.
    const drawn = await edges();
    expect(drawn).toContainEqual(expect.stringMatching(/^found-1→doc-2-/));
    expect(drawn.filter((edge) => edge?.startsWith('question→'))).toEqual([expect.stringMatching(/^question→doc-1-/)]);
    expect(drawn).toContain('found-2→answer');
    expect(await page.getAttribute('#chain-graph', 'aria-hidden')).toBe('true');

    // A document of the chain opens the chunk it was cited for.
    await page.click('#chain-graph [data-node^="doc-2-"]');
    await page.waitForSelector('#citation-detail:not([hidden])');
    expect(await page.textContent('#detail-snippet')).toBe('Dana Reyes works in the Materials Science department.');
    expect(pageErrors).toEqual([]);
    await page.close();
  });

  it('opens a past question by id from its stored trace, so that a wrong answer shows where its chain broke', async () => {
    await using t = await startTestGateway();
    const questionId = 'a0c1e2d3-0000-4000-8000-0000000000aa';
    const tenant = t.keys.alice.tenantId;
    const [atlas] = citationsFor(questionId, tenant, 'handbook');
    await t.traces.put(
      questionId,
      codecs.reasoningTrace.encode({
        questionId,
        scope: { tenantId: tenant, userId: 'alice', kbIds: ['handbook'] },
        question: ATLAS_QUESTION,
        analysis: { route: 'ITERATIVE', complexity: 3, decidedBy: 'RULES' },
        hops: [
          {
            hop: 1,
            query: 'Who owns project Atlas?',
            evidenceChunkIds: ['handbook:atlas#0', 'handbook:atlas#1'],
            answer: { hop: 1, answer: 'Dana Reyes', confidence: 0.9, citedChunkIds: ['handbook:atlas#0'] },
          },
          {
            hop: 2,
            query: 'Which department does Dana Reyes belong to?',
            evidenceChunkIds: ['handbook:lunch#0'],
            answer: { hop: 2, unknown: true, confidence: 0.1 },
          },
        ],
        stopReason: 'UNKNOWN',
        timings: { retrieveMs: 12, totalMs: 30 },
        citations: [atlas ?? {}],
        answer: 'I cannot answer: Project Atlas is owned by Dana Reyes [1], but no document names her department.',
        abstained: true,
        createdUnixMs: Date.UTC(2026, 0, 2, 3, 4, 5),
      }),
    );
    const page = await browser.newPage();
    await page.goto(`${t.baseUrl}/`);
    await page.fill('#api-key', t.keys.alice.key);
    await page.fill('#open-id', questionId);
    await page.click('#open');
    await page.waitForSelector('#status:has-text("Opened from its stored trace")');

    expect(await page.inputValue('#question')).toBe(ATLAS_QUESTION);
    expect(await page.textContent('#answer')).toBe(
      'I cannot answer: Project Atlas is owned by Dana Reyes [1], but no document names her department.',
    );
    expect(await page.locator('#answer a.cite').count()).toBe(1);
    const summary = (await page.textContent('#summary')) ?? '';
    expect(summary).toContain('stop: unknown');
    expect(summary).toContain('abstained');
    expect(await page.textContent('#hop-2 .hop-answer')).toContain('unknown');
    expect(await page.locator('#chain-text li').allTextContents()).toEqual([
      `question: ${ATLAS_QUESTION}`,
      `hop 1 read: Project Atlas (${tenant}) (document ${tenant}-atlas)`,
      'hop 1 found: Dana Reyes (confidence 0.90)',
      'hop 2 read: 1 chunks, none cited',
      'hop 2 found: nothing: the evidence does not say (confidence 0.10)',
      'abstained: I cannot answer: Project Atlas is owned by Dana Reyes [1], but no document names her department.',
    ]);
    expect(await page.getAttribute('#chain-graph [data-node="found-2"]', 'class')).toContain('unknown');

    // The address names the question: a reload opens it again, with the key the gateway accepted.
    expect(new URL(page.url()).hash).toBe(`#question=${questionId}`);
    await page.reload();
    await page.waitForSelector('#status:has-text("Opened from its stored trace")');
    expect(await page.inputValue('#api-key')).toBe(t.keys.alice.key);
    expect(await page.textContent('#hop-1 .hop-answer')).toContain('Dana Reyes');

    // Another user of the same tenant opens nothing: the id is as unknown to them as a made-up one.
    await page.fill('#api-key', t.keys.bob.key);
    await page.fill('#open-id', questionId);
    await page.click('#open');
    await page.waitForSelector('#status.error');
    expect(await page.textContent('#status')).toContain(`no such question (question ${questionId})`);
    expect(await page.locator('.hop').count()).toBe(0);
    expect(await page.isHidden('#chain')).toBe(true);
    await page.close();
  });

  it('a reload while the question streams follows it again from its first event, to the same answer', async () => {
    await using t = await startTestGateway({
      config: { RESUME_GRACE_MS: 30_000 },
      script: twoHopScript({ gated: true }),
    });
    const page = await browser.newPage();
    const questionId = await askAtlasThroughHopOne(page, t);

    // No trace is stored before the question ends: the page reads its events from the start.
    await page.reload();
    await page.waitForSelector('#hop-1 .hop-answer:has-text("Dana Reyes")');
    expect(await page.textContent('#question-link')).toBe(questionId);
    expect(await page.isDisabled('#stop')).toBe(false);
    await waitFor(
      async () => {
        t.reasoner.release(questionId);
        return (await page.textContent('#status')) === 'Answered.';
      },
      { timeoutMs: 15_000, description: 'the answer to render after the reload' },
    );
    expect(await page.textContent('#answer')).toBe(
      'Project Atlas is owned by Dana Reyes [1], who works in the Materials Science department [2].',
    );
    expect(await page.locator('.hop').count()).toBe(2);
    expect(await page.locator('#chain-text li').allTextContents()).toContain(
      'hop 2 found: Materials Science (confidence 0.80)',
    );
    expect(t.reasoner.record(questionId)?.cancel).toBeUndefined();
    await page.close();
  });

  it('resumes the same question after the network drops, without losing or repeating a token', async () => {
    await using t = await startTestGateway({
      config: { RESUME_GRACE_MS: 30_000 },
      script: twoHopScript({ gated: true }),
    });
    const proxy = await startDroppingProxy(t.gateway.httpPort);
    const page = await browser.newPage();
    const questionId = await askAtlasThroughHopOne(page, t, proxy.url);

    proxy.dropAll();
    await page.waitForSelector('#status:has-text("Connection lost")');
    // The question goes on while the page is disconnected: hop 2 and every token wait in the
    // replay buffer. The script is held before its citations, so the streamed text is all the
    // page has to show, and a token lost or repeated would show in it.
    const answer = 'Project Atlas is owned by Dana Reyes [1], who works in the Materials Science department [2].';
    // accepted, route, three events per hop, the tokens.
    const beforeCitations = 2 + 3 + 3 + answer.split(/(?<= )/).length;
    const record = t.reasoner.record(questionId);
    await waitFor(
      () => {
        if ((record?.emitted ?? 0) >= beforeCitations) return true;
        t.reasoner.release(questionId);
        return false;
      },
      { description: 'hop 2 and every token emitted while disconnected' },
    );
    expect(record?.emitted).toBe(beforeCitations);

    await page.waitForFunction(
      (expected) =>
        (
          globalThis as unknown as { document: { getElementById(id: string): { textContent: string } | null } }
        ).document.getElementById('answer')?.textContent === expected,
      answer,
      { timeout: 15_000 },
    );
    t.reasoner.release(questionId);
    await page.waitForSelector('#status:has-text("Answered.")');
    expect(await page.textContent('#hop-2 .hop-answer')).toContain('Materials Science');
    expect(await page.locator('.hop').count()).toBe(2);
    expect(await page.textContent('#answer')).toBe(answer);
    expect(record?.cancel).toBeUndefined();
    await page.close();
    await proxy.close();
  });

  it('keeps the API key only once the gateway accepted it, and shows the problem of a refused question', async () => {
    await using t = await startTestGateway();
    const page = await browser.newPage();
    await page.goto(`${t.baseUrl}/`);
    expect(await page.textContent('#key-help')).toContain('.data/dev-api-key');
    // The callback runs in the page; the test's own TypeScript has no DOM types.
    const storedKey = () =>
      page.evaluate(() =>
        (globalThis as unknown as { localStorage: { getItem(key: string): string | null } }).localStorage.getItem(
          'hopline.apiKey',
        ),
      );
    await page.fill('#api-key', t.keys.alice.key);
    expect(await storedKey()).toBeNull();
    await page.fill('#question', 'Who owns Atlas?');
    await page.click('#ask');
    await page.waitForSelector('#status:has-text("Answered.")');
    expect(await storedKey()).toBe(t.keys.alice.key);

    await page.fill('#api-key', 'hl_not-a-key');
    await page.locator('#api-key').blur();
    await page.click('#ask');
    await page.waitForSelector('#status.error');
    expect(await page.textContent('#status')).toBe('Missing or unknown API key: the API key is not known');
    // A key the gateway refused is never stored: the next visit still has the accepted one.
    await page.reload();
    expect(await page.inputValue('#api-key')).toBe(t.keys.alice.key);
    await page.close();
  });

  it('a question restarted by another hop-reasoner starts over on the page: the earlier attempt’s hops and text are gone', async () => {
    await using t = await startTestGateway({
      script: async (q) => {
        q.emit({ event: 'route', route: { route: 'SINGLE' } });
        q.emit({ event: 'hopStarted', hopStarted: { hop: 1, maxHops: 3, subQuestion: 'first attempt' } });
        q.emit({ event: 'token', token: { text: 'half an answer ' } });
        await q.gate();
        q.restart('the hop-reasoner running this question stopped before it finished');
        await q.gate();
        q.emit({ event: 'route', route: { route: 'SINGLE' } });
        q.emit({ event: 'hopStarted', hopStarted: { hop: 1, maxHops: 3, subQuestion: 'second attempt' } });
        q.emit({ event: 'token', token: { text: 'The whole answer.' } });
        q.emit({ event: 'done', done: { answer: 'The whole answer.', stopReason: 'SUFFICIENT', hops: 1 } });
      },
    });
    const page = await browser.newPage();
    await page.goto(`${t.baseUrl}/`);
    await page.fill('#api-key', t.keys.alice.key);
    await page.fill('#question', 'Who owns Atlas?');
    await page.click('#ask');
    await page.waitForSelector('#answer:has-text("half an answer")');
    const questionId = t.reasoner.asks[0]?.ctx?.questionId ?? '';
    t.reasoner.release(questionId);
    await page.waitForSelector('#status:has-text("Restarted (attempt 2)")');
    expect(await page.locator('.hop').count()).toBe(0);
    expect(await page.textContent('#answer')).toBe('');
    expect(await page.isHidden('#chain')).toBe(true);
    t.reasoner.release(questionId);
    await page.waitForSelector('#status:has-text("Answered.")');
    expect(await page.textContent('#hop-1 .hop-title')).toBe('hop 1/3 — second attempt');
    expect(await page.textContent('#answer')).toBe('The whole answer.');
    // The chain is the second attempt's alone; its one hop retrieved nothing before the answer.
    expect(await page.locator('#chain-text li').allTextContents()).toEqual([
      'question: Who owns Atlas?',
      'hop 1 read: nothing retrieved',
      'answer: The whole answer.',
    ]);
    await page.close();
  });

  it('the Stop button cancels the running question', async () => {
    await using t = await startTestGateway({ script: twoHopScript({ gated: true }) });
    const page = await browser.newPage();
    await page.goto(`${t.baseUrl}/`);
    await page.fill('#api-key', t.keys.alice.key);
    await page.fill('#question', 'Who owns Atlas?');
    await page.click('#ask');
    await page.waitForSelector('#route:not([hidden])');
    await page.click('#stop');
    await page.waitForSelector('#status.error');
    expect(await page.textContent('#status')).toBe('Error (cancelled): the client cancelled the question');
    const questionId = t.reasoner.asks[0]?.ctx?.questionId ?? '';
    expect((await waitFor(() => t.reasoner.record(questionId)?.cancel)).reason).toBe('client_request');
    await page.close();
  });
});
