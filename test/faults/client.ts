import { readSse } from '@hopline/cli';

/** One event of a question's SSE stream, its id as a number. */
export interface StreamedEvent {
  id: number;
  name: string;
  data: Record<string, unknown>;
}

/**
 * How one ask ended, as its client saw it:
 * - `answered`: the stream ended with `done`;
 * - `error`: it ended with an `error` event, or the ask was refused with a problem+json body;
 * - `cut`: the connection closed without a terminal event (nothing told the client why);
 * - `hung`: nothing ended it before the client gave up.
 */
export type AskEnd = 'answered' | 'error' | 'cut' | 'hung';

export interface AskOutcome {
  question: string;
  end: AskEnd;
  /** The HTTP status of the ask. */
  status: number;
  /** The Retry-After header of a refused ask. */
  retryAfter: string | null;
  /** Whether a refused ask's body was problem+json. */
  problem: boolean;
  events: StreamedEvent[];
  /** From the ask until the stream ended (or the client gave up). */
  ms: number;
  /** The `done` event's data, when there was one. */
  done?: { answer: string; abstained: boolean; degraded: boolean; degradedReasons: string[] };
}

export interface AskOptions {
  /** When the client gives up on a stream that has not ended: `hung`. */
  giveUpMs: number;
  /** Close the connection after this many events, as a client that went away would (`cut`). */
  leaveAfterEvents?: number;
  /** Sees each event as it arrives. */
  onEvent?: (event: StreamedEvent) => void;
}

/** Asks one question over SSE and reads its stream to the end. */
export function askStreaming(
  gatewayUrl: string,
  apiKey: string,
  question: string,
  options: AskOptions,
): Promise<AskOutcome> {
  return readStream(question, options, (signal) =>
    fetch(`${gatewayUrl}/v1/ask`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json', Accept: 'text/event-stream' },
      body: JSON.stringify({ question }),
      signal,
    }),
  );
}

/** Reads a question's stream after `lastEventId` (`GET /v1/questions/{id}/events`), to its end. */
export function resumeStreaming(
  gatewayUrl: string,
  apiKey: string,
  questionId: string,
  lastEventId: number,
  options: AskOptions,
): Promise<AskOutcome> {
  return readStream(questionId, options, (signal) =>
    fetch(`${gatewayUrl}/v1/questions/${questionId}/events`, {
      headers: { Authorization: `Bearer ${apiKey}`, Accept: 'text/event-stream', 'Last-Event-ID': String(lastEventId) },
      signal,
    }),
  );
}

async function readStream(
  question: string,
  options: AskOptions,
  request: (signal: AbortSignal) => Promise<Response>,
): Promise<AskOutcome> {
  const startedAt = Date.now();
  const giveUp = AbortSignal.timeout(options.giveUpMs);
  const outcome = (fields: Omit<AskOutcome, 'question' | 'ms'>): AskOutcome => ({
    question,
    ms: Date.now() - startedAt,
    ...fields,
  });
  let response: Response;
  try {
    response = await request(giveUp);
  } catch {
    return outcome({ end: giveUp.aborted ? 'hung' : 'cut', status: 0, retryAfter: null, problem: false, events: [] });
  }
  if (response.status !== 200 || !response.body) {
    const problem = (response.headers.get('content-type') ?? '').startsWith('application/problem+json');
    await response.body?.cancel().catch(() => undefined);
    return outcome({
      end: problem ? 'error' : 'cut',
      status: response.status,
      retryAfter: response.headers.get('retry-after'),
      problem,
      events: [],
    });
  }
  const events: StreamedEvent[] = [];
  let end: AskEnd = 'cut';
  try {
    for await (const event of readSse(response.body)) {
      const data = JSON.parse(event.data) as Record<string, unknown>;
      const streamed = { id: Number(event.id), name: event.event, data };
      events.push(streamed);
      options.onEvent?.(streamed);
      if (event.event === 'done' || event.event === 'error') {
        end = event.event === 'done' ? 'answered' : 'error';
        break;
      }
      if (events.length === options.leaveAfterEvents) break;
    }
  } catch {
    end = giveUp.aborted ? 'hung' : 'cut';
  }
  await response.body.cancel().catch(() => undefined);
  const last = events.at(-1);
  return outcome({
    end,
    status: 200,
    retryAfter: null,
    problem: false,
    events,
    ...(end === 'answered' && last ? { done: last.data as unknown as AskOutcome['done'] } : {}),
  });
}

/** The events' ids are 1, 2, 3, … without a gap or a repeat. */
export function gapFree(events: readonly StreamedEvent[], firstId = 1): boolean {
  return events.every((event, index) => event.id === firstId + index);
}

/** What a scenario's asks add up to. */
export interface Tally {
  asked: number;
  answered: number;
  clearErrors: number;
  cut: number;
  hung: number;
  /** Streams whose event ids skipped or repeated. */
  gaps: number;
  degraded: number;
  /**
   * Empty answers: no text, or an abstention ("cannot answer") not flagged degraded, which is
   * what an empty index gave. An abstention flagged degraded says why evidence is missing.
   */
  empty: number;
  /** Answers that abstained, flagged degraded or not. */
  abstained: number;
  /** Streams that announced a restarted attempt. */
  restarted: number;
  /** Answers 5xx other than 503: what the fault suite never wants to see. */
  serverErrors: number;
  /** Refused asks (429 or 503), and how many of them lacked Retry-After. */
  refused: number;
  refusedWithoutRetryAfter: number;
  /** Why answers were degraded and questions restarted, in the services' words, with how often. */
  reasons: Record<string, number>;
  /** Latency of the answered asks, ms. */
  p50: number;
  p95: number;
}

export function tally(outcomes: readonly AskOutcome[]): Tally {
  const answered = outcomes.filter((outcome) => outcome.end === 'answered');
  const times = answered.map((outcome) => outcome.ms).sort((a, b) => a - b);
  const refused = outcomes.filter((outcome) => outcome.status === 429 || outcome.status === 503);
  return {
    asked: outcomes.length,
    answered: answered.length,
    clearErrors: outcomes.filter((outcome) => outcome.end === 'error').length,
    cut: outcomes.filter((outcome) => outcome.end === 'cut').length,
    hung: outcomes.filter((outcome) => outcome.end === 'hung').length,
    gaps: outcomes.filter((outcome) => !gapFree(outcome.events)).length,
    degraded: answered.filter((outcome) => outcome.done?.degraded).length,
    empty: answered.filter(
      (outcome) => outcome.done?.answer.trim() === '' || (outcome.done?.abstained && !outcome.done.degraded),
    ).length,
    abstained: answered.filter((outcome) => outcome.done?.abstained).length,
    restarted: outcomes.filter((outcome) => outcome.events.some((event) => event.name === 'restarted')).length,
    serverErrors: outcomes.filter((outcome) => outcome.status >= 500 && outcome.status !== 503).length,
    refused: refused.length,
    refusedWithoutRetryAfter: refused.filter((outcome) => !outcome.retryAfter).length,
    reasons: countReasons(outcomes),
    p50: percentile(times, 0.5),
    p95: percentile(times, 0.95),
  };
}

function countReasons(outcomes: readonly AskOutcome[]): Record<string, number> {
  const counts: Record<string, number> = {};
  const count = (reason: string) => {
    const general = reason.replace(/^hop \d+: /, '').replace(/\d+/g, 'N');
    counts[general] = (counts[general] ?? 0) + 1;
  };
  for (const outcome of outcomes) {
    for (const reason of new Set(outcome.done?.degradedReasons ?? [])) count(`degraded: ${reason}`);
    for (const event of outcome.events) {
      if (event.name === 'restarted') count(`restarted: ${String(event.data.reason)}`);
      if (event.name === 'error') {
        const error = (event.data.error ?? event.data) as { code?: unknown; message?: unknown };
        count(`error: ${String(error.code)}: ${String(error.message)}`);
      }
    }
    if (outcome.end === 'error' && outcome.events.length === 0) count(`refused: ${outcome.status}`);
  }
  return counts;
}

function percentile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] as number;
}

const DEMO_QUESTIONS = [
  'Which department does the owner of Project Atlas belong to?',
  'How many titles did the coach of the team that won the 2031 Harbor Cup win as a player?',
  'Which was founded first, Northwind Labs or Bluefin Analytics?',
  '天穹项目的负责人属于哪个部门？',
];

/**
 * `count` answerable questions over the demo corpus, each asked for the first time: a tag
 * (the scenario and the question's number) keeps the answer cache from answering any of them.
 */
export function demoQuestions(tag: string, count: number): string[] {
  return Array.from({ length: count }, (_, i) => demoQuestion(tag, i));
}

export function demoQuestion(tag: string, index: number): string {
  return `${DEMO_QUESTIONS[index % DEMO_QUESTIONS.length]} (${tag} ${index + 1})`;
}
