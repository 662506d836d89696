// `pnpm ingest <folder|file> [--kb id] [--url url]`: sends text, markdown and JSONL documents to
// the gateway's ingestion API, which publishes them to the durable ingest stream.
import { resolve } from 'node:path';
import { resolveApiKey } from './api-key.js';
import {
  DEFAULT_GATEWAY_URL,
  ENVIRONMENT_HELP,
  gatewayUrl,
  parseCommandLine,
  refusalLine,
  runCommand,
  unreachable,
  UsageError,
} from './command.js';
import { loadDocuments } from './documents.js';

const USAGE = `usage: pnpm ingest <folder|file> [--kb id] [--url url]

  Sends every .txt, .md, .markdown and .jsonl file (a folder is read recursively). A file's
  name is its document id; a JSONL file holds one document per line ({"docId", "title", "text"}).

  --kb id     the knowledge base to add them to (default: demo)
  --url url   the gateway's HTTP address (default: $HOPLINE_URL, else ${DEFAULT_GATEWAY_URL})
  --help      print this help

${ENVIRONMENT_HELP}`;

const BATCH = 100;

runCommand(USAGE, async () => {
  const { values, positionals } = parseCommandLine({
    allowPositionals: true,
    options: {
      kb: { type: 'string', default: 'demo' },
      url: { type: 'string' },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const path = positionals[0];
  if (!path) throw new UsageError('no folder or file to ingest');
  const url = gatewayUrl(values.url);

  // pnpm runs scripts in the repository root; a relative path means the folder pnpm was run in.
  const documents = loadDocuments(resolve(process.env.INIT_CWD ?? '.', path));
  let accepted = 0;
  let duplicates = 0;
  for (let start = 0; start < documents.length; start += BATCH) {
    const response = await fetch(new URL(`/v1/kbs/${encodeURIComponent(values.kb)}/documents`, url), {
      method: 'POST',
      headers: { Authorization: `Bearer ${resolveApiKey()}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ documents: documents.slice(start, start + BATCH) }),
    }).catch((error: unknown) => {
      throw unreachable(url, error);
    });
    if (!response.ok) throw new Error(await refusalLine(response));
    const result = (await response.json()) as { accepted: Array<{ duplicate: boolean }> };
    accepted += result.accepted.length;
    duplicates += result.accepted.filter((entry) => entry.duplicate).length;
  }
  console.log(`queued ${accepted} documents for kb "${values.kb}" (${duplicates} already queued at the same version)`);
  return 0;
});
