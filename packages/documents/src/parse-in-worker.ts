import { Worker } from 'node:worker_threads';
import { UnavailableError } from '@hopline/contracts';
import { UnreadableFileError, type ParsedFile } from './parsed-file.js';

/** The bounds on parsing one PDF, DOCX or HTML page, past which it is refused as too large or too complex. */
export interface ParseLimits {
  /**
   * Wall-clock time for the parse, from the call: its wait for the parser and a worker's start
   * included.
   */
  timeoutMs: number;
  /** The parse worker's JavaScript heap (V8's old generation), in MiB. */
  maxHeapMb: number;
  /**
   * What the process's resident memory may grow by during the parse, in MiB: the heap cap does
   * not cover the buffers pdf.js decodes a PDF's streams into, which live outside the heap (a
   * PDF of 600 KiB whose content stream inflates to 600 MiB took the process to 1.4 GiB).
   */
  maxMemoryMb: number;
  /** What a DOCX's zip entries may unpack to, in bytes, all of them together. */
  maxUnpackedBytes: number;
}

/**
 * Constants, not settings: the same parsers serve the gateway's uploads and `pnpm ingest`, and
 * they bound a hostile file rather than size a deployment. An upload waits for its parse, and the
 * gateway's HTTP request timeout (30 s by default) runs while a multi-file upload's later files
 * are still to be read, so a parse gets 20 s. A PDF of 2,500 pages or a DOCX of 50,000 paragraphs
 * parses in under 7 s within 512 MiB of heap (mammoth needs 30 to 60 times a DOCX's XML). A DOCX's
 * parts are its XML and its media, which are stored as they come; 128 MiB holds both for any
 * upload within the gateway's default INGEST_MAX_DOCUMENT_BYTES (50 MiB).
 */
export const DEFAULT_PARSE_LIMITS: ParseLimits = {
  timeoutMs: 20_000,
  maxHeapMb: 512,
  maxMemoryMb: 640,
  maxUnpackedBytes: 128 * 1024 * 1024,
};

/** How often a parse's memory is read: a stream inflates a few tens of MiB in that time. */
const MEMORY_POLL_MS = 50;

/**
 * Parses that may wait for the parser: past them a file is refused for now (the caller's 503
 * with Retry-After), not queued behind minutes of parsing with its bytes held.
 */
const MAX_WAITING_PARSES = 4;

/** What a caller whose file could not wait for the parser is told to wait before it sends it again. */
const BUSY_RETRY_AFTER_MS = 5_000;

/**
 * One parse at a time, the others waiting their turn: a worker's heap is capped, so the number of
 * workers must be too, or a burst of hostile uploads would take the process's memory all the
 * same. One worker's 512 MiB of heap and 128 MiB of unpacked parts beside the gateway's own fit
 * the 1 GiB its Kubernetes manifest gives it; two would not.
 */
const PARALLEL_PARSES = 1;

/**
 * A worker that finished a parse waits this long for the next before it is ended. A worker costs
 * a fraction of a second to start and to load pdf.js or mammoth (seconds from source, through
 * tsx), which `pnpm ingest` would pay for every file of a folder; the gateway's uploads are rare,
 * and between them it holds no idle worker's memory. A worker that ran past its time is ended at
 * once, and one past its heap ends itself, so no stuck parse is ever handed the next file.
 */
const IDLE_WORKER_MS = 10_000;

export type DocumentKind = 'pdf' | 'docx' | 'html';

/** What parse-worker.ts is asked to parse. */
export interface WorkerTask {
  kind: DocumentKind;
  data: Uint8Array;
  maxUnpackedBytes: number;
}

/** What parse-worker.ts answers: the parsed file, or why not. */
export type WorkerAnswer = { parsed: ParsedFile } | { failure: { unreadable: boolean; message: string } };

// Run from source (tsx, vitest) this module is TypeScript, and so is the worker; Node 20 cannot
// load TypeScript, and a worker inherits neither the loader hooks of the thread that starts it nor
// an --import of tsx (tsx registers itself in the main thread only). So that worker starts from a
// script that registers tsx's hooks through tsx's API, resolved from here as tsx itself was.
const FROM_SOURCE = import.meta.url.endsWith('.ts');
const WORKER_URL = FROM_SOURCE
  ? new URL('./parse-worker.ts', import.meta.url)
  : new URL('./parse-worker.js', import.meta.url);
const SOURCE_BOOTSTRAP = `
const { workerData } = require('node:worker_threads');
import(workerData.tsxApi).then(({ register }) => { register(); return import(workerData.workerUrl); });
`;

/** A worker thread that parses one file at a time. */
interface ParseWorker {
  worker: Worker;
  heapMb: number;
  /** The parse it runs now: told of the worker's answer, or of its end once it has exited. */
  onOutcome?: (outcome: WorkerAnswer | Error) => void;
  /** Why the worker failed, told to its parse when it has exited (its memory freed). */
  failure?: Error;
  /** Resolves once the worker has exited. */
  exited: Promise<void>;
  idleTimer?: NodeJS.Timeout;
}

const idleWorkers: ParseWorker[] = [];
let running = 0;
const waiting: Array<() => void> = [];

/**
 * A PDF, DOCX or HTML page parsed in a worker thread, within `limits`: the event loop of the caller (the
 * gateway, serving questions) never runs pdf.js or mammoth. A parse past its time or past its
 * memory is stopped (its worker terminated), one past its heap dies with its worker; either is
 * an UnreadableFileError that says which limit the file passed. A file that finds the parser
 * busy with MAX_WAITING_PARSES others waiting, or that waits past its time, is an
 * UnavailableError with the wait to retry after: the file is not at fault.
 */
export async function parseInWorker(kind: DocumentKind, data: Uint8Array, limits: ParseLimits): Promise<ParsedFile> {
  const deadline = Date.now() + limits.timeoutMs;
  await takeSlot(deadline);
  try {
    return await parseOnce(kind, data, limits, deadline);
  } finally {
    // The slot passes straight to the next parse waiting, if any.
    const next = waiting.shift();
    if (next) next();
    else running--;
  }
}

async function takeSlot(deadline: number): Promise<void> {
  if (running < PARALLEL_PARSES) {
    running++;
    return;
  }
  const busy = (why: string) =>
    new UnavailableError(`the document parser is busy: ${why}`, { retryAfterMs: BUSY_RETRY_AFTER_MS });
  if (waiting.length >= MAX_WAITING_PARSES) throw busy(`${waiting.length} files are waiting for it`);
  await new Promise<void>((resolve, reject) => {
    const turn = () => {
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(() => {
      waiting.splice(waiting.indexOf(turn), 1);
      reject(busy('the file waited for it past its time'));
    }, deadline - Date.now());
    waiting.push(turn);
  });
}

function parseOnce(kind: DocumentKind, data: Uint8Array, limits: ParseLimits, deadline: number): Promise<ParsedFile> {
  const file = kind === 'html' ? 'an HTML page' : `a ${kind.toUpperCase()}`;
  const parser = takeIdleWorker(limits.maxHeapMb) ?? startWorker(limits.maxHeapMb);
  // The worker gets its own copy, moved rather than copied again: pdf.js detaches the buffer it
  // reads, and the caller's may be a view into a larger one.
  const copy = new Uint8Array(data);
  const task: WorkerTask = { kind, data: copy, maxUnpackedBytes: limits.maxUnpackedBytes };
  const startRss = process.memoryUsage.rss();
  return new Promise<ParsedFile>((resolve, reject) => {
    const stop = () => {
      clearTimeout(timer);
      clearInterval(memoryWatch);
      parser.onOutcome = undefined;
    };
    // A stopped worker's memory is freed before the parse settles, and so before the next takes
    // the slot: two workers at their limits at once would not fit where one does.
    const stopWorker = (why: string) => {
      stop();
      forgetIdle(parser);
      void parser.worker.terminate();
      void parser.exited.then(() => reject(new UnreadableFileError(`${why}: split it into smaller documents`)));
    };
    const timer = setTimeout(
      () => stopWorker(`${file} too complex to parse within ${limits.timeoutMs / 1000} s`),
      deadline - Date.now(),
    );
    const memoryWatch = setInterval(() => {
      if (process.memoryUsage.rss() - startRss > limits.maxMemoryMb * MIB) {
        stopWorker(`${file} too large to parse within ${limits.maxMemoryMb} MiB of memory`);
      }
    }, MEMORY_POLL_MS);
    parser.onOutcome = (outcome) => {
      stop();
      if (outcome instanceof Error) {
        const outOfMemory = (outcome as { code?: unknown }).code === 'ERR_WORKER_OUT_OF_MEMORY';
        reject(
          outOfMemory
            ? new UnreadableFileError(
                `${file} too large to parse within ${limits.maxHeapMb} MiB of heap: split it into smaller documents`,
              )
            : outcome,
        );
        return;
      }
      keepIdle(parser);
      if ('parsed' in outcome) resolve(outcome.parsed);
      else if (outcome.failure.unreadable) reject(new UnreadableFileError(outcome.failure.message));
      else reject(new Error(outcome.failure.message));
    };
    parser.worker.ref();
    parser.worker.postMessage(task, [copy.buffer]);
  });
}

const MIB = 1024 * 1024;

function startWorker(heapMb: number): ParseWorker {
  const worker = new Worker(FROM_SOURCE ? SOURCE_BOOTSTRAP : WORKER_URL, {
    eval: FROM_SOURCE,
    ...(FROM_SOURCE ? { workerData: { workerUrl: WORKER_URL.href, tsxApi: import.meta.resolve('tsx/esm/api') } } : {}),
    // Not the parent's flags: a service's --import of its telemetry has no business here.
    execArgv: [],
    resourceLimits: { maxOldGenerationSizeMb: heapMb },
  });
  const parser: ParseWorker = {
    worker,
    heapMb,
    exited: new Promise((resolve) => worker.once('exit', () => resolve())),
  };
  worker.on('message', (answer: WorkerAnswer) => parser.onOutcome?.(answer));
  // A worker that fails (out of memory, a module it cannot load) or ends is never used again;
  // its parse hears of it once it has exited.
  worker.on('error', (error) => {
    parser.failure ??= error;
    forgetIdle(parser);
  });
  worker.on('exit', (code) => {
    forgetIdle(parser);
    parser.onOutcome?.(
      parser.failure ?? new Error(`the document parser stopped without an answer (exit code ${code})`),
    );
  });
  return parser;
}

function takeIdleWorker(heapMb: number): ParseWorker | undefined {
  const index = idleWorkers.findIndex((parser) => parser.heapMb === heapMb);
  if (index < 0) return undefined;
  const [parser] = idleWorkers.splice(index, 1);
  clearTimeout(parser?.idleTimer);
  return parser;
}

function keepIdle(parser: ParseWorker): void {
  // An idle worker keeps no process (a CLI run, a test) from ending.
  parser.worker.unref();
  parser.idleTimer = setTimeout(() => {
    forgetIdle(parser);
    void parser.worker.terminate();
  }, IDLE_WORKER_MS).unref();
  idleWorkers.push(parser);
}

function forgetIdle(parser: ParseWorker): void {
  clearTimeout(parser.idleTimer);
  const index = idleWorkers.indexOf(parser);
  if (index >= 0) idleWorkers.splice(index, 1);
}
