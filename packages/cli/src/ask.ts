// `pnpm ask "question" [--kb id]... [--doc id]... [--max-hops n] [--json] [--url url]`: asks the gateway and
// streams the hop events and the answer to the terminal as they arrive.
import { setTimeout as sleep } from 'node:timers/promises';
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
import { formatEvent } from './format.js';
import { readSse, type SseEvent } from './sse-client.js';

/** A stream cut short is resumed until this many resumes in a row brought no event. */
const RESUMES_WITHOUT_EVENTS = 3;

/**
 * The wait before a resume that follows one which did not reach the gateway (a replica
 * restarting, a load balancer not yet routing around a killed one). With the bound above, a
 * gateway away for about 4 s is waited for: well inside the 10 s (RESUME_GRACE_MS) that a
 * question outlives its last reader, after which there is nothing left to resume.
 */
const PAUSE_BEFORE_RESUMING_MS = 2_000;

/** What a proxy in front of the gateway answers while no gateway is there to take the request. */
const GATEWAY_AWAY = new Set([502, 503, 504]);

const USAGE = `usage: pnpm ask "your question" [--kb id]... [--doc id]... [--max-hops n] [--json] [--url url]

  --kb id        a knowledge base to ask over; repeat for several (default: every kb the key may read)
  --doc id       read only this document of those kbs; repeat for several (default: every document)
  --max-hops n   at most n hops, 1-5 (default: the gateway's DEFAULT_MAX_HOPS)
  --json         print each event as one JSON line instead of text
  --url url      the gateway's HTTP address (default: $HOPLINE_URL, else ${DEFAULT_GATEWAY_URL})
  --help         print this help

A stream that ends or breaks off before the answer (the gateway shut down or killed, a proxy
dropping the connection) is resumed after the last event printed. A resume that cannot reach
the gateway (no connection, or a proxy's ${[...GATEWAY_AWAY].join(', ')}) is tried again after ${PAUSE_BEFORE_RESUMING_MS / 1_000} s.
After ${RESUMES_WITHOUT_EVENTS} resumes in a row without a new event, the command gives up with status 1.
The question itself is asked once: a failed ask is reported, not sent again. Ctrl-C prints
"cancelled" and exits with status 130.

${ENVIRONMENT_HELP}`;

runCommand(USAGE, async () => {
  const { values, positionals } = parseCommandLine({
    allowPositionals: true,
    options: {
      kb: { type: 'string', multiple: true },
      doc: { type: 'string', multiple: true },
      'max-hops': { type: 'string' },
      url: { type: 'string' },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const question = positionals.join(' ').trim();
  if (!question) throw new UsageError('no question');
  const url = gatewayUrl(values.url);

  const body: Record<string, unknown> = { question };
  if (values.kb) body.kbIds = values.kb;
  if (values.doc) body.docIds = values.doc;
  const maxHops = values['max-hops'];
  if (maxHops !== undefined) {
    // Number("three") is NaN, which JSON sends as null: a typo must not ask without the limit meant.
    if (!/^[1-5]$/.test(maxHops)) throw new UsageError(`--max-hops takes a whole number from 1 to 5, not "${maxHops}"`);
    body.maxHops = Number(maxHops);
  }

  const authorization = `Bearer ${resolveApiKey()}`;
  const abort = new AbortController();
  process.once('SIGINT', () => abort.abort());

  try {
    const response = await fetch(gatewayEndpoint(url, '/v1/ask'), {
      method: 'POST',
      headers: { Authorization: authorization, 'Content-Type': 'application/json', Accept: 'text/event-stream' },
      body: JSON.stringify(body),
      signal: abort.signal,
    }).catch((error: unknown) => {
      throw unreachable(url, error);
    });
    if (!response.ok || !response.body) throw new Error(await refusalLine(response));
    const questionId = response.headers.get('Hopline-Question-Id');

    let stream: ReadableStream<Uint8Array> | undefined = response.body;
    let lastEventId: string | undefined;
    let ended = false;
    let failed = false;
    let answerStreamed = false;
    let resumesWithoutEvents = 0;
    /** How the last read of the events, or the last resume, failed; undefined when the stream just ended. */
    let breakage: string | undefined;
    for (;;) {
      if (stream) {
        breakage = await readUntilCut(stream, abort.signal, (event) => {
          const data = JSON.parse(event.data) as Record<string, unknown>;
          if (values.json) console.log(JSON.stringify({ event: event.event, data }));
          else process.stdout.write(formatEvent(event.event, data, answerStreamed));
          lastEventId = event.id ?? lastEventId;
          resumesWithoutEvents = 0;
          if (event.event === 'token') answerStreamed = true;
          if (event.event === 'error') failed = true;
          if (event.event === 'done' || event.event === 'error') ended = true;
        });
        if (ended) return failed ? 1 : 0;
      }
      // The stream ended or broke off before the question's done or error: it was cut short (the
      // gateway shut down or was killed, a proxy's idle timeout or a dropped connection) while the
      // question runs on. Its events after the last one printed are read again, as long as
      // resuming brings new ones.
      if (questionId === null) {
        throw new Error(
          `the stream ${breakage === undefined ? 'ended' : `broke off (${breakage})`} before the answer, and the gateway named no question to resume`,
        );
      }
      if (resumesWithoutEvents === RESUMES_WITHOUT_EVENTS) {
        throw new Error(
          `the stream ended before the answer ${RESUMES_WITHOUT_EVENTS} times without a new event (question ${questionId})${breakage === undefined ? '' : `; the last time: ${breakage}`}`,
        );
      }
      // The last resume did not reach the gateway: give it a moment to come back.
      if (stream === undefined) await sleep(PAUSE_BEFORE_RESUMING_MS, undefined, { signal: abort.signal });
      resumesWithoutEvents += 1;
      const resumed = await fetch(gatewayEndpoint(url, `/v1/questions/${encodeURIComponent(questionId)}/events`), {
        headers: {
          Authorization: authorization,
          Accept: 'text/event-stream',
          ...(lastEventId === undefined ? {} : { 'Last-Event-ID': lastEventId }),
        },
        signal: abort.signal,
      }).catch((error: unknown) => {
        if (abort.signal.aborted) throw error;
        return unreachable(url, error);
      });
      stream = undefined;
      if (resumed instanceof Error) breakage = resumed.message;
      else if (GATEWAY_AWAY.has(resumed.status)) breakage = await refusalLine(resumed);
      else if (!resumed.ok || !resumed.body) {
        throw new Error(`the stream ended before the answer and could not be resumed: ${await refusalLine(resumed)}`);
      } else stream = resumed.body;
    }
  } catch (error) {
    // Ctrl-C aborts the request, which fails the fetch or the stream: the user stopped it, the
    // gateway did not fail. 130 is what a shell reports for a command ended by SIGINT.
    if (!abort.signal.aborted) throw error;
    console.error('cancelled');
    return 130;
  }
});

/**
 * Hands each event of the stream to `onEvent` until the stream ends, or until reading it fails
 * (undici's "terminated" when the connection is reset mid-stream): the question runs on either
 * way, so a failed read is returned as why the stream was cut short, not thrown. Ctrl-C's abort
 * fails the read too, and is thrown: the user stopped it. What `onEvent` throws is thrown.
 */
async function readUntilCut(
  stream: ReadableStream<Uint8Array>,
  signal: AbortSignal,
  onEvent: (event: SseEvent) => void,
): Promise<string | undefined> {
  const events = readSse(stream);
  for (;;) {
    let next: IteratorResult<SseEvent>;
    try {
      next = await events.next();
    } catch (error) {
      if (signal.aborted) throw error;
      const cause = (error as Error).cause;
      return `${(error as Error).message}${cause instanceof Error ? `: ${cause.message}` : ''}`;
    }
    if (next.done) return undefined;
    onEvent(next.value);
  }
}
