// `pnpm ingest <folder|file> [--kb id]`: sends text, markdown and JSONL documents to the
// gateway's ingestion API, which publishes them to the durable ingest stream.
import { parseArgs } from 'node:util';
import { resolveApiKey } from './api-key.js';
import { loadDocuments } from './documents.js';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    kb: { type: 'string', default: 'demo' },
    url: { type: 'string', default: process.env.HOPLINE_URL ?? 'http://127.0.0.1:8080' },
  },
});

const path = positionals[0];
if (!path) {
  console.error('usage: pnpm ingest <folder|file> [--kb id]');
  process.exit(2);
}

const documents = loadDocuments(path);
const BATCH = 100;
let accepted = 0;
let duplicates = 0;
for (let start = 0; start < documents.length; start += BATCH) {
  const response = await fetch(new URL(`/v1/kbs/${encodeURIComponent(values.kb)}/documents`, values.url), {
    method: 'POST',
    headers: { Authorization: `Bearer ${resolveApiKey()}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ documents: documents.slice(start, start + BATCH) }),
  });
  if (!response.ok) {
    console.error(`${response.status}: ${await response.text()}`);
    process.exit(1);
  }
  const result = (await response.json()) as { accepted: Array<{ duplicate: boolean }> };
  accepted += result.accepted.length;
  duplicates += result.accepted.filter((entry) => entry.duplicate).length;
}
console.log(`queued ${accepted} documents for kb "${values.kb}" (${duplicates} already queued at the same version)`);
