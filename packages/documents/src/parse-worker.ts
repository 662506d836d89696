import { parentPort } from 'node:worker_threads';
import { decodeUtf8, UnreadableFileError, type ParsedFile } from './parsed-file.js';
import type { WorkerAnswer, WorkerTask } from './parse-in-worker.js';

// A worker parses one file at a time, as parse-in-worker.ts hands them out, and answers each.
parentPort?.on('message', (task: WorkerTask) => {
  void parse(task).then(
    (parsed) => parentPort?.postMessage({ parsed } satisfies WorkerAnswer),
    (error: unknown) =>
      parentPort?.postMessage({
        failure: {
          unreadable: error instanceof UnreadableFileError,
          message: error instanceof Error ? error.message : String(error),
        },
      } satisfies WorkerAnswer),
  );
});

async function parse({ kind, data, maxUnpackedBytes }: WorkerTask): Promise<ParsedFile> {
  // pdf.js and mammoth are large: a worker loads only those its files need.
  if (kind === 'pdf') return (await import('./pdf.js')).parsePdf(data);
  if (kind === 'html') return (await import('./html.js')).parseHtml(decodeUtf8(data));
  const docx = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  return (await import('./docx.js')).parseDocx(docx, maxUnpackedBytes);
}
