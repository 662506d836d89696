// `pnpm ingest <folder|file>... [--kb id] [--url url] [--restart] [--wait s] [--retry-for s]`: parses text,
// markdown, HTML, PDF, DOCX and JSONL files and streams them to the gateway's ingestion API as
// NDJSON, in batches, with a progress bar (files parsed, documents accepted and searchable, rate,
// ETA); a file that cannot be read is reported at the end and the rest still go in, and an
// interrupted run resumes where it stopped.
import { statSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { resolve } from 'node:path';
import { SingleBar } from 'cli-progress';
import { resolveApiKey } from './api-key.js';
import {
  DEFAULT_GATEWAY_URL,
  ENVIRONMENT_HELP,
  gatewayEndpoint,
  gatewayUrl,
  parseCommandLine,
  refusalLine,
  runCommand,
  unreachable,
  UsageError,
} from './command.js';
import { listDocumentFiles, readDocumentFile, type DocumentInput } from './documents.js';
import { IngestJournal } from './ingest-journal.js';
import { retryAfterSeconds } from './retry-after.js';
import { SearchableWatch } from './searchable.js';

const USAGE = `usage: pnpm ingest <folder|file>... [--kb id] [--url url] [--restart] [--wait s] [--retry-for s]

  Sends every .txt, .md, .markdown, .html, .htm, .pdf, .docx and .jsonl file of the folders and
  files given (a folder is read recursively; several, as a shell glob gives them, go in one
  run). A file's name is its document id; a JSONL file holds one document per line
  ({"docId", "title", "text"}, each docId once). A PDF's chunks cite their page, other files'
  their heading.
  A file that cannot be read (a scanned PDF without text, a corrupt file) or that the gateway
  refuses (larger than its INGEST_MAX_DOCUMENT_BYTES) is reported at the end; the others still
  go in. Run it again after an interruption: files the gateway already
  accepted, unchanged since, are not sent again. The bar counts documents as searchable once
  the slowest retrieval worker has applied them (its lag, from GET /v1/kbs); after the last
  file it waits until all are, while the workers make progress.

  --kb id     the knowledge base to add them to (default: demo)
  --url url   the gateway's HTTP address (default: $HOPLINE_URL, else ${DEFAULT_GATEWAY_URL})
  --restart   send every file again, forgetting what an earlier run had sent
  --wait s    stop waiting for the documents to be searchable once the workers' lag has not
              shrunk, or the gateway has not reported it, for s seconds (default 30; 0: do
              not wait)
  --retry-for s
              a batch the gateway refuses for now (429, or 503 while its message bus is away or
              it shuts down) goes again after the Retry-After it names (a second at least),
              for at most s seconds of waiting over the run (default 60; 0: stop at the first
              such refusal)
  --help      print this help

${ENVIRONMENT_HELP}`;

/** A request carries at most this many documents or bytes: each one accepted is a resume point. */
const BATCH_DOCUMENTS = 500;
const BATCH_BYTES = 16 * 1024 * 1024;

/** A file's documents as NDJSON lines, and the version the journal records once they are accepted. */
interface FileLines {
  name: string;
  version: number;
  lines: string[];
}

interface Batch {
  files: FileLines[];
  documents: number;
  bytes: number;
}

const emptyBatch = (): Batch => ({ files: [], documents: 0, bytes: 0 });

/** A refusal that names a document (too large, invalid), not the request or the gateway. */
const refusesADocument = (status: number) => status === 400 || status === 413 || status === 422;

/**
 * The gateway hung up while the body was still being sent: how it refuses a document over its
 * limit without reading the rest (its 413 cannot reach a client that is still writing).
 */
const HUNG_UP = 'hung up';
const hungUp = (error: unknown): boolean => {
  const code = ((error as Error).cause as { code?: unknown } | undefined)?.code;
  return code === 'EPIPE' || code === 'ECONNRESET' || code === 'UND_ERR_SOCKET';
};

runCommand(USAGE, async () => {
  const { values, positionals } = parseCommandLine({
    allowPositionals: true,
    options: {
      kb: { type: 'string', default: 'demo' },
      url: { type: 'string' },
      restart: { type: 'boolean', default: false },
      wait: { type: 'string', default: '30' },
      'retry-for': { type: 'string', default: '60' },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  if (positionals.length === 0) throw new UsageError('no folder or file to ingest');
  const waitSeconds = Number(values.wait);
  if (!Number.isFinite(waitSeconds) || waitSeconds < 0)
    throw new UsageError(`--wait takes seconds (0 or more), not "${values.wait}"`);
  const retryForSeconds = Number(values['retry-for']);
  if (!Number.isFinite(retryForSeconds) || retryForSeconds < 0)
    throw new UsageError(`--retry-for takes seconds (0 or more), not "${values['retry-for']}"`);
  const url = gatewayUrl(values.url);
  const apiKey = resolveApiKey();
  const endpoint = gatewayEndpoint(url, `/v1/kbs/${encodeURIComponent(values.kb)}/documents`);

  // pnpm runs scripts in the repository root; a relative path means the folder pnpm was run in.
  const workingFolder = process.env.INIT_CWD ?? '.';
  // Several paths (docs/*.md) are one run: each file is named relative to the folder given, or
  // by its own name.
  const paths = positionals.map((path) => resolve(workingFolder, path));
  const files = listDocumentFiles(...paths);
  const journal = IngestJournal.open(
    resolve(workingFolder, '.data'),
    { paths, kb: values.kb, url: url.href, apiKey },
    values.restart,
  );

  const progress = new SingleBar({
    format:
      'files {bar} {value}/{total} parsed · {accepted} documents accepted · {searchable} searchable · {rate} documents/s · ETA {eta_formatted}',
    hideCursor: true,
    etaBuffer: 50,
  });
  const started = performance.now();
  let accepted = 0;
  let duplicates = 0;
  let skipped = 0;
  /** Refusals for now that were waited out, and the seconds waited. */
  let retries = 0;
  let waitedSeconds = 0;
  const failures: string[] = [];
  const reportFailures = () => {
    if (failures.length === 0) return;
    console.error(`${failures.length} file(s) not ingested:`);
    for (const failure of failures) console.error(`  ${failure}`);
  };
  const seen = new Map<string, string>();
  const watch = new SearchableWatch(url, apiKey);
  let parsed = 0;
  const update = (files: number) => {
    parsed = files;
    progress.update(files, {
      accepted,
      searchable: watch.searchable ?? '?',
      rate: Math.round(accepted / Math.max(0.001, (performance.now() - started) / 1000)),
    });
  };

  const post = (files: readonly FileLines[]): Promise<Response | typeof HUNG_UP> =>
    fetch(endpoint, {
      method: 'POST',
      headers: { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/x-ndjson' },
      body: files.flatMap((file) => file.lines).join(''),
    }).catch((error: unknown) => {
      if (hungUp(error)) return HUNG_UP;
      throw unreachable(url, error);
    });
  const accept = async (response: Response, files: readonly FileLines[]) => {
    const result = (await response.json()) as { accepted: Array<{ duplicate: boolean }> };
    accepted += result.accepted.length;
    duplicates += result.accepted.filter((entry) => entry.duplicate).length;
    journal.record(files);
    watch.acceptedNow(accepted);
  };
  /**
   * Posts a batch again after each refusal for now, in a loop (a retry per stack frame would
   * pile up frames for as long as the refusals last), until it gets another answer or the next
   * wait would take the run past --retry-for: that refusal is the answer then.
   */
  const postWaitingOutRefusals = async (files: readonly FileLines[]): Promise<Response | typeof HUNG_UP> => {
    for (;;) {
      const response = await post(files);
      if (response === HUNG_UP) return response;
      const wait = retryAfterSeconds(response);
      if (wait === undefined || waitedSeconds + wait > retryForSeconds) return response;
      await response.body?.cancel();
      retries += 1;
      waitedSeconds += wait;
      await sleep(wait * 1_000);
    }
  };
  /**
   * Sends a batch. When the gateway refuses a document in it (one over its size limit, say),
   * the batch goes again a file at a time, so that only that file fails, reported at the end;
   * the documents before it in the refused request stay accepted and come back as duplicates.
   * A gateway that hangs up mid-body is taken the same way: a file it hangs up on alone fails,
   * and a gateway that is really gone fails the next file's connection, which stops the run.
   * A refusal for now (429, 503 with Retry-After) is waited out and the batch goes again, while
   * the run has waited less than --retry-for: the documents are idempotent by id and version.
   * Any other refusal stops the run: the next run resumes after the batches accepted.
   */
  const send = async (files: readonly FileLines[]): Promise<void> => {
    if (files.length === 0) return;
    const response = await postWaitingOutRefusals(files);
    if (response === HUNG_UP) {
      if (files.length > 1) for (const file of files) await send([file]);
      else
        failures.push(
          `${(files[0] as FileLines).name}: the gateway closed the connection while it was being sent (larger than its INGEST_MAX_DOCUMENT_BYTES?)`,
        );
      return;
    }
    if (response.ok) return accept(response, files);
    if (!refusesADocument(response.status) || files.length === 1) {
      const reason = await refusalLine(response);
      if (!refusesADocument(response.status)) throw new Error(reason);
      failures.push(`${(files[0] as FileLines).name}: ${reason}`);
      return;
    }
    await response.body?.cancel();
    for (const file of files) await send([file]);
  };

  progress.start(files.length, 0, { accepted: 0, searchable: '?', rate: 0 });
  const polls = setInterval(() => void watch.poll().then(() => update(parsed)), 1_000);
  let batch = emptyBatch();
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
      const lines = documents.map((document) => {
        seen.set(document.docId, file.name);
        return `${JSON.stringify(document)}\n`;
      });
      batch.files.push({ name: file.name, version, lines });
      batch.documents += lines.length;
      batch.bytes += lines.reduce((sum, line) => sum + Buffer.byteLength(line), 0);
      if (batch.documents >= BATCH_DOCUMENTS || batch.bytes >= BATCH_BYTES) {
        await send(batch.files);
        batch = emptyBatch();
      }
      update(index + 1);
    }
    await send(batch.files);
    update(files.length);
    clearInterval(polls);
    if (waitSeconds > 0 && accepted > 0) await watch.untilSearchable(waitSeconds * 1_000, () => update(files.length));
  } catch (error) {
    // A refused batch stops the run: the files that had failed before it are named all the same
    // (below the bar, stopped first), not only in a later run.
    progress.stop();
    reportFailures();
    throw error;
  } finally {
    clearInterval(polls);
    progress.stop();
  }

  const seconds = (performance.now() - started) / 1000;
  console.log(
    `queued ${accepted} documents for kb "${values.kb}" in ${seconds.toFixed(1)} s ` +
      `(${duplicates} already queued at the same version` +
      `${skipped > 0 ? `; ${skipped} file(s) skipped, accepted by an earlier run` : ''}` +
      `${retries > 0 ? `; ${retries} refusal(s) for now waited out, ${waitedSeconds} s in all` : ''})`,
  );
  const searchable = watch.searchable;
  if (searchable !== undefined && accepted > 0)
    console.log(
      searchable === accepted
        ? `all ${accepted} documents searchable`
        : `${searchable} of ${accepted} documents searchable so far; the rest are still being indexed`,
    );
  reportFailures();
  return failures.length === 0 ? 0 : 1;
});
