import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Embedded } from '@hopline/embedded';
import { startEmbedded } from '@hopline/embedded';
import { embeddedTestConfig } from './support/embedded-config.js';
import { waitFor } from '@hopline/test-support';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasChromium, launchChromium, requireTool } from '../gateway/support.js';

const enabled = requireTool('chromium', hasChromium(), 'apt-get install -y chromium');

/** Where the screenshots go: HOPLINE_SCREENSHOT_DIR, else the system temp folder. */
const SCREENSHOT_DIR = process.env.HOPLINE_SCREENSHOT_DIR ?? join(tmpdir(), 'hopline-screenshots');

// The web page's evidence chain over the real services and the demo corpus: what the hop-reasoner
// streams and what it stores as the trace draw the same graph.
describe.skipIf(!enabled)('system - the web page draws the evidence chain of a demo question', () => {
  let dataDir: string;
  let embedded: Embedded;
  let browser: Browser;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'hopline-web-chain-'));
    embedded = await startEmbedded(embeddedTestConfig(dataDir), {});
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await embedded?.stop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  async function askOnPage(question: string): Promise<{ page: Page; questionId: string }> {
    const page = await browser.newPage({ viewport: { width: 1100, height: 900 } });
    await page.goto(`${embedded.httpUrl}/`);
    await page.fill('#api-key', embedded.devKey?.key ?? '');
    await page.fill('#question', question);
    await page.click('#ask');
    await page.waitForSelector('#status:has-text("Answered.")', { timeout: 20_000 });
    return { page, questionId: (await page.textContent('#question-link')) ?? '' };
  }

  const rows = (page: Page) => page.locator('#chain-text li').allTextContents();
  const edges = (page: Page) =>
    page
      .locator('#chain-graph [data-edge]')
      .evaluateAll((paths) => paths.map((path) => path.getAttribute('data-edge')));

  /** Waits until the hop-reasoner stored the question's trace: it does so just after the answer. */
  const traceStored = (questionId: string) =>
    waitFor(
      async () =>
        (
          await fetch(`${embedded.httpUrl}/v1/questions/${questionId}/trace`, {
            headers: { Authorization: `Bearer ${embedded.devKey?.key}` },
          })
        ).ok,
      { description: `the trace of ${questionId}` },
    );

  it.each([
    {
      question: 'Which department does the owner of Project Atlas belong to?',
      documents: ['project-atlas', 'mira-chen'],
      found: ['Mira Chen', 'Platform Engineering'],
      screenshot: 'hopline-evidence-chain.png',
    },
    {
      question: '天穹项目的负责人属于哪个部门？',
      documents: ['tianqiong', 'li-ming'],
      found: ['李明', '数据平台部'],
      screenshot: 'hopline-evidence-chain-zh.png',
    },
  ])(
    'a bridge question ($found.1): each hop starts from what the one before it found, and its trace redraws the same chain',
    async ({ question, documents, found, screenshot }) => {
      const { page, questionId } = await askOnPage(question);
      const live = await rows(page);
      expect(live[0]).toBe(`question: ${question}`);
      expect(live[1]).toMatch(new RegExp(`^hop 1 read: .*\\(document ${documents[0]}\\)`));
      expect(live[2]).toMatch(new RegExp(`^hop 1 found: ${found[0]} \\(confidence`));
      expect(live[3]).toMatch(new RegExp(`^hop 2 read: .*\\(document ${documents[1]}\\)`));
      expect(live[4]).toMatch(new RegExp(`^hop 2 found: ${found[1]} \\(confidence`));
      expect(live[5]).toMatch(new RegExp(`^answer: .*${found[1]}`));
      expect(live).toHaveLength(6);
      expect(await edges(page)).toContain(`found-1→doc-2-demo/${documents[1]}`);
      mkdirSync(SCREENSHOT_DIR, { recursive: true });
      await page.screenshot({ path: join(SCREENSHOT_DIR, screenshot), fullPage: true });

      await traceStored(questionId);
      await page.reload();
      await page.waitForSelector('#status:has-text("Opened from its stored trace")');
      expect(await rows(page)).toEqual(live);
      await page.close();
    },
  );

  it('a comparison: its parts all start from the question and meet again in the answer', async () => {
    const { page } = await askOnPage('Which was founded first, Northwind Labs or Bluefin Analytics?');
    const chain = await rows(page);
    expect(chain.map((row) => row.slice(0, row.indexOf(':')))).toEqual(['question', 'read', 'found', 'answer']);
    expect(chain[1]).toContain('(document northwind-labs)');
    expect(chain[1]).toContain('(document bluefin-analytics)');
    const drawn = await edges(page);
    expect(drawn).toContainEqual(expect.stringMatching(/^question→doc-1-/));
    expect(drawn).toContainEqual(expect.stringMatching(/^question→doc-2-/));
    expect(drawn).toEqual(expect.arrayContaining(['found-1→answer', 'found-2→answer']));
    expect(drawn.filter((edge) => edge?.startsWith('found-1→doc-'))).toEqual([]);
    await page.screenshot({ path: join(SCREENSHOT_DIR, 'hopline-evidence-chain-parallel.png'), fullPage: true });
    await page.close();
  });
});
