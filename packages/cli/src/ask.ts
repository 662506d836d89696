// `pnpm ask "question" [--kb id]... [--max-hops n] [--json]`: asks the gateway and streams
// the hop events and the answer to the terminal as they arrive.
import { parseArgs } from 'node:util';
import { resolveApiKey } from './api-key.js';
import { formatEvent } from './format.js';
import { readSse } from './sse-client.js';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    kb: { type: 'string', multiple: true },
    'max-hops': { type: 'string' },
    url: { type: 'string', default: process.env.HOPLINE_URL ?? 'http://127.0.0.1:8080' },
    json: { type: 'boolean', default: false },
  },
});

const question = positionals.join(' ').trim();
if (!question) {
  console.error('usage: pnpm ask "your question" [--kb id]... [--max-hops n] [--json]');
  process.exit(2);
}

const body: Record<string, unknown> = { question };
if (values.kb) body.kbIds = values.kb;
if (values['max-hops']) body.maxHops = Number(values['max-hops']);

const abort = new AbortController();
process.once('SIGINT', () => abort.abort());

let response: Response;
try {
  response = await fetch(new URL('/v1/ask', values.url), {
    method: 'POST',
    headers: {
      Authorization: `Bearer ${resolveApiKey()}`,
      'Content-Type': 'application/json',
      Accept: 'text/event-stream',
    },
    body: JSON.stringify(body),
    signal: abort.signal,
  });
} catch (error) {
  console.error(`cannot reach the gateway at ${values.url}: ${(error as Error).message}`);
  process.exit(1);
}
if (!response.ok || !response.body) {
  console.error(`${response.status} ${response.statusText}: ${await response.text()}`);
  process.exit(1);
}

let failed = false;
for await (const event of readSse(response.body)) {
  if (values.json) {
    console.log(JSON.stringify({ event: event.event, data: JSON.parse(event.data) as unknown }));
  } else {
    process.stdout.write(formatEvent(event.event, JSON.parse(event.data) as Record<string, unknown>));
  }
  if (event.event === 'error') failed = true;
}
process.exitCode = failed ? 1 : 0;
