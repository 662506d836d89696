// The answer-gateway's own cost per question over HTTP (issue 15: moving the edge to fastify
// must not make it grow), as a ratio against floors measured in the same run and process:
//   gateway json   POST /v1/ask answered as JSON: authentication, body parsing and validation,
//                  admission, the question's enqueue and its events read back from the memory
//                  bus, from a hop-reasoner stand-in that writes accepted → route → done at once
//   gateway sse    the same question streamed as Server-Sent Events, read to its end
//   fastify echo   a bare fastify route that parses the same JSON body and answers a JSON object
//                  the size of the gateway's answer: what any fastify route costs
//   node:http echo the same with node:http alone: the floor under any framework
// Closed-loop clients on loopback, concurrency 1 and 8, rounds interleaving the four targets so
// that drift on a shared machine hits all alike. The answer cache is off (every question runs).
//
//   node --conditions=@hopline/source --import tsx bench/gateway-http.ts [--quick]
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import Fastify from 'fastify';
import { ApiKeyStore, generateApiKey, hashApiKey } from '@hopline/answer-gateway';
import { startScriptedGateway } from './support/scripted-gateway.js';
import { machineDescription } from './support/machine.js';

const QUICK = process.argv.includes('--quick') || process.env.BENCH_QUICK === '1';
const ROUNDS = QUICK ? 2 : 6;
const REQUESTS_PER_ROUND = QUICK ? 40 : 100;
const CONCURRENCIES = [1, 8] as const;
const ANSWER = 'Atlas is owned by Dana Reyes, who belongs to the Platform department [1][2]. '.repeat(4);

const key = generateApiKey();
const { url: gatewayBaseUrl, stop: stopGateway } = await startScriptedGateway({
  async script(write) {
    await write({ event: 'accepted', accepted: {} });
    await write({ event: 'route', route: { route: 'SINGLE' } });
    await write({ event: 'done', done: { answer: ANSWER, stopReason: 'SUFFICIENT' } });
  },
  keys: new ApiKeyStore({
    keys: [{ keyHash: hashApiKey(key), tenantId: 'bench', userId: 'bench', kbIds: ['kb'], canIngest: false }],
  }),
  config: { CACHE_MAX_ENTRIES: 0, MAX_IN_FLIGHT: 1_000 },
});

const echoBody = (question: unknown) => ({ questionId: 'bench', answer: ANSWER, question, stopReason: 'SUFFICIENT' });
const fastifyEcho = Fastify();
fastifyEcho.post('/echo', (request) => echoBody((request.body as { question?: unknown }).question));
await fastifyEcho.listen({ host: '127.0.0.1', port: 0 });
const httpEcho: Server = createServer((request, response) => {
  const parts: Buffer[] = [];
  request.on('data', (part: Buffer) => parts.push(part));
  request.on('end', () => {
    const { question } = JSON.parse(Buffer.concat(parts).toString('utf8')) as { question?: unknown };
    const json = JSON.stringify(echoBody(question));
    response.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(json) });
    response.end(json);
  });
});
await new Promise<void>((resolve) => httpEcho.listen(0, '127.0.0.1', resolve));

const gatewayUrl = `${gatewayBaseUrl}/v1/ask`;
let asked = 0;
const targets = {
  'gateway json': { url: gatewayUrl, accept: 'application/json' },
  'gateway sse': { url: gatewayUrl, accept: 'text/event-stream' },
  'fastify echo': { url: `http://127.0.0.1:${(fastifyEcho.server.address() as AddressInfo).port}/echo`, accept: '' },
  'node:http echo': { url: `http://127.0.0.1:${(httpEcho.address() as AddressInfo).port}/echo`, accept: '' },
} as const;
type Target = keyof typeof targets;

/** One request read to its end; its time in ms. Each question differs, so none could be cached. */
async function once(target: Target): Promise<number> {
  const { url, accept } = targets[target];
  const started = performance.now();
  const response = await fetch(url, {
    method: 'POST',
    headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json', Accept: accept },
    body: JSON.stringify({ question: `Who owns Atlas? (${asked++})` }),
  });
  const text = await response.text();
  if (response.status !== 200 || (target === 'gateway sse' && !text.includes('event: done')))
    throw new Error(`${target}: ${response.status} ${text.slice(0, 200)}`);
  return performance.now() - started;
}

async function closedLoop(target: Target, concurrency: number, requests: number): Promise<number[]> {
  const times: number[] = [];
  const client = async () => {
    while (times.length + concurrency <= requests) times.push(await once(target));
  };
  await Promise.all(Array.from({ length: concurrency }, client));
  return times;
}

const percentile = (values: number[], p: number) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor((p / 100) * values.length))] ?? NaN;

// Warm-up: JIT, connections and the gateway's lazily built schemas.
for (const target of Object.keys(targets) as Target[]) await closedLoop(target, 8, 200);

const samples = new Map<string, { times: number[]; seconds: number }>();
for (let round = 0; round < ROUNDS; round++) {
  for (const concurrency of CONCURRENCIES) {
    for (const target of Object.keys(targets) as Target[]) {
      const started = performance.now();
      const times = await closedLoop(target, concurrency, REQUESTS_PER_ROUND);
      const entry = samples.get(`${target}|${concurrency}`) ?? { times: [], seconds: 0 };
      entry.times.push(...times);
      entry.seconds += (performance.now() - started) / 1000;
      samples.set(`${target}|${concurrency}`, entry);
    }
  }
}
const load = loadavg().map((value) => value.toFixed(1));
await stopGateway(0);
await fastifyEcho.close();
httpEcho.close();

const rows = [...samples].map(([name, { times, seconds }]) => {
  const [target = '', concurrency = ''] = name.split('|');
  return {
    target,
    concurrency: Number(concurrency),
    n: times.length,
    perSecond: times.length / seconds,
    p50: percentile(times, 50),
    p95: percentile(times, 95),
  };
});
const row = (target: Target, concurrency: number) =>
  rows.find((entry) => entry.target === target && entry.concurrency === concurrency)!;
const ratios = CONCURRENCIES.flatMap((concurrency) =>
  (['gateway json', 'gateway sse'] as const).flatMap((target) =>
    (['fastify echo', 'node:http echo'] as const).map((floor) => ({
      ratio: `${target} / ${floor}`,
      concurrency,
      p50: row(target, concurrency).p50 / row(floor, concurrency).p50,
      throughput: row(floor, concurrency).perSecond / row(target, concurrency).perSecond,
    })),
  ),
);

const fixed = (value: number) => value.toFixed(2);
const report = `# Answer-gateway HTTP overhead per question, against bare echo floors

Command: \`node --conditions=@hopline/source --import tsx bench/gateway-http.ts\`

Machine: ${machineDescription()}. ${ROUNDS} rounds × ${REQUESTS_PER_ROUND} requests per target and concurrency, interleaved; a question is accepted → route → done from a hop-reasoner stand-in on the memory bus (no retrieval, no model), so what is measured is the gateway's own work.
Load average after the run: ${load.join(' / ')} (1/5/15 min) on a machine shared with other work.

| target | concurrency | requests/s | p50 ms | p95 ms | n |
| --- | ---: | ---: | ---: | ---: | ---: |
${rows.map((r) => `| ${r.target} | ${r.concurrency} | ${r.perSecond.toFixed(0)} | ${fixed(r.p50)} | ${fixed(r.p95)} | ${r.n} |`).join('\n')}

| ratio (gateway cost in floors) | concurrency | p50 time | 1 / throughput |
| --- | ---: | ---: | ---: |
${ratios.map((r) => `| ${r.ratio} | ${r.concurrency} | ${fixed(r.p50)} | ${fixed(r.throughput)} |`).join('\n')}
`;
console.log(report);
if (!QUICK) {
  const resultsDir = fileURLToPath(new URL('./results/', import.meta.url));
  writeFileSync(`${resultsDir}gateway-http.md`, report);
  writeFileSync(`${resultsDir}gateway-http.json`, `${JSON.stringify({ rows, ratios, loadavg: load }, null, 2)}\n`);
}
