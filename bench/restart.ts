// Restart of the embedded mode on a folder of 100,000 indexed chunks (issue 14), in one run:
//   build      the worker's own indexes (BM25 with entity keys for the graph, vectors, their
//              logs) written by the indexer in batches of 256 until the HNSW graph holds every
//              vector, then closed (a snapshot), as a stopped `pnpm start` leaves its folder;
//   load       both indexes and the entity graph opened from that folder in this process;
//   restart    the embedded mode started on the folder until /healthz is ready with every chunk,
//              against a start on an empty folder, alternating, in the same run.
// The snapshot is the current format (5: both sides keep chunks as bytes parsed on demand, the
// lexical side their entity keys beside them, entries as arrays; the vector side no vector the
// HNSW graph holds): a folder an older build wrote is rewritten by the first stop over it, so it
// is opened and closed once before anything is measured.
// bench/ingestion.ts measures the ingestion before a restart.
// Usage: bench/restart.ts [documents] [folder] (default 100,000; a folder a previous run built
// with as many documents is reused, since building 100,000 takes minutes).
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { IngestCommand__Output } from '@hopline/contracts';
import { chunkEntities } from '@hopline/text';
import {
  EmbeddedLexicalBackend,
  EmbeddedVectorBackend,
  HashingEmbedder,
  createEntityGraph,
  createIndexer,
  graphIndexedLexical,
  loadEntityGraph,
} from '@hopline/retrieval';
import { freePort } from '@hopline/test-support';
import { healthy, spawnCompiled, spawnNode, stopProcess } from './support/processes.js';
import { syntheticText, syntheticWords } from './support/synthetic-corpus.js';
import { machineDescription } from './support/machine.js';

const repoRoot = fileURLToPath(new URL('..', import.meta.url));
const DOCUMENTS = Number(process.argv[2] ?? 100_000);
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const INDEX_BATCH = 256;
const embedder = new HashingEmbedder();
const seconds = (ms: number) => Math.round(ms) / 1000;
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;

/** Where the embedded mode keeps the worker's indexes under DATA_DIR. */
const indexDirs = (dataDir: string) => ({
  lexical: join(dataDir, 'retrieval', 'bm25'),
  vector: join(dataDir, 'retrieval', 'vectors'),
});
const snapshotManifests = (dataDir: string) => [
  join(indexDirs(dataDir).lexical, 'lexical.snapshot', 'manifest.json'),
  join(indexDirs(dataDir).vector, 'vector.snapshot', 'manifest.json'),
];

async function openIndexes(dataDir: string) {
  const dirs = indexDirs(dataDir);
  const [lexical, vector] = await Promise.all([
    EmbeddedLexicalBackend.open({ dataDir: dirs.lexical }),
    EmbeddedVectorBackend.open({ dimensions: embedder.dimensions, dataDir: dirs.vector }),
  ]);
  const graph = createEntityGraph(chunkEntities);
  await loadEntityGraph(graph, lexical);
  return { lexical: graphIndexedLexical(lexical, graph), vector, graph };
}

async function build(dataDir: string): Promise<number> {
  const { lexical, vector } = await openIndexes(dataDir);
  const indexer = createIndexer({ lexical, vector, embedder });
  const stream = syntheticWords();
  const started = performance.now();
  for (let start = 0; start < DOCUMENTS; start += INDEX_BATCH) {
    const batch: IngestCommand__Output[] = [];
    for (let i = start; i < Math.min(DOCUMENTS, start + INDEX_BATCH); i++) {
      const text = syntheticText(stream);
      batch.push({
        op: 'upsert',
        upsert: {
          tenantId: 'bench',
          kbId: 'bulk',
          docId: `doc-${i}`,
          version: 1,
          title: `Document ${i}`,
          text,
          effectiveDate: '',
          sourceUri: '',
          metadata: {},
        },
      });
    }
    for (const attempt of await indexer.applyAll(batch)) if (!attempt.ok) throw attempt.error;
  }
  while ((vector.bufferedVectors?.() ?? 0) > 0) await new Promise((resolve) => setTimeout(resolve, 200));
  await Promise.all([lexical.close(), vector.close()]);
  return performance.now() - started;
}

/** The snapshots' format, as their manifests say. */
function snapshotFormats(dataDir: string): number[] {
  return snapshotManifests(dataDir).map(
    (file) => (JSON.parse(readFileSync(file, 'utf8')) as { format: number }).format,
  );
}

async function loadInProcess(dataDir: string) {
  const cpu = process.cpuUsage();
  const started = performance.now();
  const { lexical, vector, graph } = await openIndexes(dataDir);
  const ms = performance.now() - started;
  const used = process.cpuUsage(cpu);
  const held = (await vector.countChunks()).reduce((sum, kb) => sum + kb.chunks, 0);
  if (held !== DOCUMENTS || graph.size.chunks !== DOCUMENTS)
    throw new Error(`the folder loaded ${held} vectors and ${graph.size.chunks} graph chunks, not ${DOCUMENTS}`);
  await Promise.all([lexical.close(), vector.close()]);
  return { ms, cpuMs: (used.user + used.system) / 1000 };
}

/** CPU seconds a process has used (user + system), read from /proc: what its start-up cost, whatever the load. */
function processCpuMs(pid: number): number {
  // Fields after the command's closing parenthesis; utime and stime are the 12th and 13th, in clock ticks.
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS_PER_SECOND;
}
const CLOCK_TICKS_PER_SECOND = 100;

type Runtime = 'tsx' | 'dist';

/**
 * Process start → /healthz ready with `chunks` on both sides, then stopped: wall time and the
 * process's CPU time. `tsx` runs the sources as `pnpm start` does (transpiled as they load);
 * `dist` the compiled JavaScript, as the Docker image does (`pnpm exec tsc -b` first).
 */
async function startUntilReady(
  dataDir: string,
  chunks: number,
  runtime: Runtime,
): Promise<{ ms: number; cpuMs: number }> {
  const [httpPort, opsPort] = [await freePort(), await freePort()];
  const started = performance.now();
  const env = {
    DATA_DIR: dataDir,
    HTTP_PORT: String(httpPort),
    GRPC_PORT: '0',
    METRICS_PORT: String(opsPort),
    LOAD_DEMO_CORPUS: 'false',
  };
  const proc =
    runtime === 'tsx'
      ? spawnNode('embedded', ['packages/embedded/src/start.ts'], repoRoot, env)
      : spawnCompiled('embedded', 'packages/embedded/dist/start.js', repoRoot, env);
  try {
    await healthy(
      proc,
      `http://127.0.0.1:${opsPort}`,
      (body) => {
        const { index } = (
          body as {
            details: { retrievalWorker: { details: { index: { lexicalChunks: number; vectorChunks: number } } } };
          }
        ).details.retrievalWorker.details;
        return index.lexicalChunks === chunks && index.vectorChunks === chunks;
      },
      600_000,
    );
    return { ms: performance.now() - started, cpuMs: processCpuMs(proc.child.pid as number) };
  } finally {
    // Nothing was written, so the stop takes no snapshot and leaves the folder as it was.
    await stopProcess(proc.child, 600_000);
  }
}

function folderBytes(dir: string): number {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    total += entry.isDirectory() ? folderBytes(path) : statSync(path).size;
  }
  return total;
}

const workDir = mkdtempSync(join(tmpdir(), 'hopline-bench-restart-'));
const dataDir = process.argv[3] ?? join(workDir, 'indexed');
try {
  let buildMs: number | undefined;
  if (!snapshotManifests(dataDir).every((file) => existsSync(file))) {
    buildMs = await build(dataDir);
    console.log(`built ${DOCUMENTS} documents in ${seconds(buildMs)} s`);
  } else console.log(`reusing the folder a previous run built`);
  const formatsFound = snapshotFormats(dataDir);
  // Opened and closed once: a snapshot of an older format is rewritten in the current one.
  await loadInProcess(dataDir);
  const formats = snapshotFormats(dataDir);
  const sideBytes = Object.fromEntries(
    (['lexical', 'vector'] as const).map((side) => [
      side,
      folderBytes(join(indexDirs(dataDir)[side], `${side}.snapshot`)),
    ]),
  ) as Record<'lexical' | 'vector', number>;
  const megabytes = (bytes: number) => Math.round(bytes / 1e5) / 10;

  if (!existsSync(join(repoRoot, 'packages/embedded/dist/start.js')))
    throw new Error('no compiled embedded mode: run pnpm exec tsc -b first');
  const load = { ms: [] as number[], cpuMs: [] as number[] };
  const starts = {
    tsx: [] as Array<{ ms: number; cpuMs: number }>,
    tsxEmpty: [] as Array<{ ms: number; cpuMs: number }>,
    dist: [] as Array<{ ms: number; cpuMs: number }>,
    distEmpty: [] as Array<{ ms: number; cpuMs: number }>,
  };
  for (let round = 0; round < ROUNDS; round++) {
    const loaded = await loadInProcess(dataDir);
    load.ms.push(loaded.ms);
    load.cpuMs.push(loaded.cpuMs);
    starts.tsx.push(await startUntilReady(dataDir, DOCUMENTS, 'tsx'));
    starts.dist.push(await startUntilReady(dataDir, DOCUMENTS, 'dist'));
    starts.tsxEmpty.push(await startUntilReady(join(workDir, `empty-tsx-${round}`), 0, 'tsx'));
    starts.distEmpty.push(await startUntilReady(join(workDir, `empty-dist-${round}`), 0, 'dist'));
    console.log(
      `round ${round + 1}: ${JSON.stringify(Object.fromEntries(Object.entries(starts).map(([k, v]) => [k, v.at(-1)])))}`,
    );
  }

  const wall = (runs: Array<{ ms: number }>) => seconds(median(runs.map((run) => run.ms)));
  const cpu = (runs: Array<{ cpuMs: number }>) => seconds(median(runs.map((run) => run.cpuMs)));
  const results = {
    command: 'node --conditions=@hopline/source --import tsx bench/restart.ts [documents] [folder]',
    machine: machineDescription(),
    loadAverageAtEnd: Number(loadavg()[0]?.toFixed(1)),
    documents: DOCUMENTS,
    rounds: ROUNDS,
    ...(buildMs === undefined ? {} : { buildSeconds: seconds(buildMs) }),
    snapshot: {
      formatsFound,
      formats,
      megabytes: megabytes(sideBytes.lexical + sideBytes.vector),
      lexicalMegabytes: megabytes(sideBytes.lexical),
      vectorMegabytes: megabytes(sideBytes.vector),
    },
    medians: Object.fromEntries(
      Object.entries(starts).map(([name, runs]) => [name, { readySeconds: wall(runs), cpuSeconds: cpu(runs) }]),
    ),
    loadInProcess: { seconds: seconds(median(load.ms)), cpuSeconds: seconds(median(load.cpuMs)) },
    runs: { starts, load },
  };
  const row = (label: string, runs: Array<{ ms: number; cpuMs: number }>) =>
    `| ${label} | ${wall(runs)} s | ${cpu(runs)} s |`;
  writeFileSync(`${repoRoot}bench/results/restart.json`, `${JSON.stringify(results, null, 2)}\n`);
  writeFileSync(
    `${repoRoot}bench/results/restart.md`,
    [
      '# Restart of the embedded mode on indexed chunks',
      '',
      `Command: \`${results.command}\` (${DOCUMENTS} synthetic documents of 80 words, one chunk each, as bench/ingestion.ts writes them; hashing embeddings, 384 dimensions; medians of ${ROUNDS} rounds, each alternating every start below)`,
      '',
      `Machine: ${results.machine}. Shared by several engineers while it ran (load average ${results.loadAverageAtEnd} at the end): wall times are noisy and stretched by the load; the process's own CPU time until ready is what the start-up costs.`,
      '',
      `Snapshot on disk: ${results.snapshot.megabytes} MB (lexical ${results.snapshot.lexicalMegabytes} MB, vector ${results.snapshot.vectorMegabytes} MB), format ${formats.join(' / ')} (found as ${formatsFound.join(' / ')}; an older one is rewritten by the first close over it). Folder: ${buildMs === undefined ? 'reused, built by an earlier build of the same documents' : `built in this run (${results.buildSeconds} s)`}.`,
      '',
      `| process start → /healthz ready with every chunk (target ≤ 5 s at 100,000) | wall | CPU of the process |`,
      '| --- | ---: | ---: |',
      row(`**${DOCUMENTS} chunks, compiled** (dist, as the Docker image runs)`, starts.dist),
      row('empty folder, compiled', starts.distEmpty),
      row(`${DOCUMENTS} chunks, sources through tsx (\`pnpm start\`)`, starts.tsx),
      row('empty folder, tsx', starts.tsxEmpty),
      '',
      `Load in this process (both indexes and the entity graph, compiled or not as the bench runs): ${results.loadInProcess.seconds} s wall, ${results.loadInProcess.cpuSeconds} s CPU.`,
      '',
    ].join('\n'),
  );
  console.log('wrote bench/results/restart.md and bench/results/restart.json');
} finally {
  rmSync(workDir, { recursive: true, force: true });
}
