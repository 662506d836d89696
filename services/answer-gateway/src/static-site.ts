import { readFileSync } from 'node:fs';

export interface StaticAsset {
  contentType: string;
  body: Buffer;
}

export interface StaticSite {
  /** The page's files by name: each is served at `/<name>`, index.html at `/` too. */
  readonly assets: ReadonlyMap<string, StaticAsset>;
}

const FILES: Record<string, string> = {
  'index.html': 'text/html; charset=utf-8',
  'app.js': 'text/javascript; charset=utf-8',
  'chain.js': 'text/javascript; charset=utf-8',
  'style.css': 'text/css; charset=utf-8',
};

// web/ sits beside src/ and dist/, so the same relative path works from both.
const WEB_ROOT = new URL('../web/', import.meta.url);

/** The web page's files, read once at start: no build step, and a missing file fails the start, not a request. */
export function loadStaticSite(root: URL = WEB_ROOT): StaticSite {
  const assets = new Map<string, StaticAsset>();
  for (const [file, contentType] of Object.entries(FILES)) {
    assets.set(file, { contentType, body: readFileSync(new URL(file, root)) });
  }
  return { assets };
}
