// `pnpm ingest <folder|file> [--kb id] [--url url] [--restart]`: parses text, markdown, HTML,
// PDF, DOCX and JSONL files and streams them to the gateway's ingestion API as NDJSON, in
// batches, with a progress bar; a file that cannot be read is reported at the end and the rest
// still go in, and an interrupted folder resumes where it stopped.
import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import { SingleBar } from 'cli-progress';
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
import { listDocumentFiles, readDocumentFile, type DocumentInput } from './documents.js';
import { IngestJournal } from './ingest-journal.js';

const USAGE = `usage: pnpm ingest <folder|file> [--kb id] [--url url] [--restart]

  Sends every .txt, .md, .markdown, .html, .htm, .pdf, .docx and .jsonl file (a folder is read
  recursively). A file's name is its document id; a JSONL file holds one document per line
  ({"docId", "title", "text"}). A PDF's chunks cite their page, other files' their heading.
  A file that cannot be read (a scanned PDF without text, a corrupt file) is reported at the
  end; the others still go in. Run it again after an interruption: files the gateway already
  accepted, unchanged since, are not sent again.

  --kb id     the knowledge base to add them to (default: demo)
  --url url   the gateway's HTTP address (default: $HOPLINE_URL, else ${DEFAULT_GATEWAY_URL})
  --restart   send every file again, forgetting what an earlier run had sent
  --help      print this help

${ENVIRONMENT_HELP}`;

/** A request carries at most this many documents or bytes: each one accepted is a resume point. */
const BATCH_DOCUMENTS = 500;
const BATCH_BYTES = 16 * 1024 * 1024;

interface Batch {
  lines: string[];
  bytes: number;
  files: Array<{ name: string; version: number }>;
}

runCommand(USAGE, async () => {
  const { values, positionals } = parseCommandLine({
    allowPositionals: true,
    options: {
      kb: { type: 'string', default: 'demo' },
      url: { type: 'string' },
      restart: { type: 'boolean', default: false },
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
  const apiKey = resolveApiKey();
  const endpoint = new URL(`/v1/kbs/${encodeURIComponent(values.kb)}/documents`, url);

  // pnpm runs scripts in the repository root; a relative path means the folder pnpm was run in.
  const workingFolder = process.env.INIT_CWD ?? '.';
  const folder = resolve(workingFolder, path);
  const files = listDocumentFiles(folder);
  const journal = IngestJournal.open(
    resolve(workingFolder, '.data'),
    { folder, kb: values.kb, url: url.href, apiKey },
    values.restart,
  );

  const progress = new SingleBar({
    format:
      'files {bar} {value}/{total} parsed · {accepted} documents accepted · {rate} documents/s · ETA {eta_formatted}',
    hideCursor: true,
    etaBuffer: 50,
  });
  const started = performance.now();
  let accepted = 0;
  let duplicates = 0;
  let skipped = 0;
  const failures: string[] = [];
  const seen = new Map<string, string>();
  const update = (parsed: number) =>
    progress.update(parsed, {
      accepted,
      rate: Math.round(accepted / Math.max(0.001, (performance.now() - started) / 1000)),
    });

  const send = async (batch: Batch) => {
    if (batch.lines.length === 0) return;
    const response = await fetch(endpoint, {
      method: 'POST',
      headers: { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/x-ndjson' },
      body: batch.lines.join(''),
    }).catch((error: unknown) => {
      throw unreachable(url, error);
    });
    if (!response.ok) throw new Error(await refusalLine(response));
    const result = (await response.json()) as { accepted: Array<{ duplicate: boolean }> };
    accepted += result.accepted.length;
    duplicates += result.accepted.filter((entry) => entry.duplicate).length;
    journal.record(batch.files);
  };

  progress.start(files.length, 0, { accepted: 0, rate: 0 });
  let batch: Batch = { lines: [], bytes: 0, files: [] };
  try {
    for (const [index, file] of files.entries()) {
      const version = Math.floor(statSync(file.path).mtimeMs);
      if (journal.has(file.name, version)) {
        skipped++;
        update(index + 1);
        continue;
      }
      let documents: DocumentInput[];
      try {
        documents = await readDocumentFile(file);
        const clash = documents.find((document) => seen.has(document.docId));
        if (clash) {
          throw new Error(`document id "${clash.docId}" comes from both ${seen.get(clash.docId)} and ${file.name}`);
        }
      } catch (error) {
        failures.push((error as Error).message);
        update(index + 1);
        continue;
      }
      for (const document of documents) {
        seen.set(document.docId, file.name);
        const line = `${JSON.stringify(document)}\n`;
        batch.lines.push(line);
        batch.bytes += Buffer.byteLength(line);
      }
      batch.files.push({ name: file.name, version });
      if (batch.lines.length >= BATCH_DOCUMENTS || batch.bytes >= BATCH_BYTES) {
        await send(batch);
        batch = { lines: [], bytes: 0, files: [] };
      }
      update(index + 1);
    }
    await send(batch);
    update(files.length);
  } finally {
    progress.stop();
  }

  const seconds = (performance.now() - started) / 1000;
  console.log(
    `queued ${accepted} documents for kb "${values.kb}" in ${seconds.toFixed(1)} s ` +
      `(${duplicates} already queued at the same version` +
      `${skipped > 0 ? `; ${skipped} file(s) skipped, accepted by an earlier run` : ''})`,
  );
  if (failures.length === 0) return 0;
  console.error(`${failures.length} file(s) not ingested:`);
  for (const failure of failures) console.error(`  ${failure}`);
  return 1;
});
