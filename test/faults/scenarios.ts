import { setTimeout as sleep } from 'node:timers/promises';
import { waitFor } from '@hopline/test-support';
import type { ServiceProcess } from '../support/service-process.js';
import {
  askStreaming,
  demoQuestion,
  demoQuestions,
  gapFree,
  resumeStreaming,
  tally,
  type AskOutcome,
  type StreamedEvent,
  type Tally,
} from './client.js';
import { BULK_KB, indexedChunks, workerIndex, type Fleet } from './fleet.js';
import { poisonInputs } from './poison.js';

/** What every scenario is given. */
export interface ScenarioContext {
  /** Questions per scenario: 20 in the full suite, fewer in CI. */
  questions: number;
  /** The healthy fleet's figures, measured first (absent for the baseline itself). */
  baseline?: Tally;
}

export interface ScenarioResult {
  /** The measured values, in words, for the reliability table. */
  measured: string;
  /** Whether the scenario's "must hold" held. */
  holds: boolean;
  /** The asks' counts, where the scenario's questions were asked at once. */
  tally?: Tally;
}

export interface Scenario {
  id: string;
  /** The fault, as the reliability table names it. */
  fault: string;
  mustHold: string;
  run(fleet: Fleet, context: ScenarioContext): Promise<ScenarioResult>;
}

/** Longer than the gateway's question deadline (QUESTION_TIMEOUT_MS, 30 s) and its end: a stream still open then hung. */
const GIVE_UP_MS = 45_000;
/** The hop-reasoner's RETRIEVE_BUDGET_MS, which the fleet leaves at its default. */
const RETRIEVE_BUDGET_MS = 2_500;

/** Asks `count` questions at once through one gateway; `started()` counts streams with an event. */
function askMany(fleet: Fleet, tag: string, count: number, gateway = 0) {
  const seen = new Set<number>();
  const outcomes = Promise.all(
    demoQuestions(tag, count).map((question, index) =>
      askStreaming(fleet.gatewayUrls[gateway] as string, fleet.apiKey, question, {
        giveUpMs: GIVE_UP_MS,
        onEvent: () => seen.add(index),
      }),
    ),
  );
  return { outcomes, started: () => seen.size };
}

/** The usual counts of a tally, for the measured column. */
export function describeTally(t: Tally): string {
  const parts = [
    `${t.answered}/${t.asked} answered`,
    `${t.clearErrors} clear errors`,
    `${t.hung} hung`,
    `${t.cut} cut without an end`,
    `${t.gaps} with event gaps`,
    `${t.degraded} degraded`,
  ];
  if (t.restarted > 0) parts.push(`${t.restarted} restarted`);
  if (t.answered > 0) parts.push(`p50 ${seconds(t.p50)}, p95 ${seconds(t.p95)}`);
  return parts.join(', ');
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/** The sum of a Prometheus sample over the series whose labels include `labels`. */
async function metric(service: ServiceProcess, name: string, labels: Record<string, string>): Promise<number> {
  const text = await (await fetch(`${service.opsUrl}/metrics`)).text();
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (Object.entries(labels).every(([key, value]) => line.includes(`${key}="${value}"`))) {
      sum += Number(line.slice(line.lastIndexOf(' ') + 1));
    }
  }
  return sum;
}

/**
 * What a hop-reasoner's reranker breaker has counted so far: its openings, and the failures it
 * counted while closed, which are the ones that opened it (not cancelled calls, nor calls that
 * were still in flight when it opened, nor failed trials).
 */
async function rerankBreaker(reasoner: ServiceProcess): Promise<{ openings: number; failuresWhileClosed: number }> {
  const downstream = 'reranker';
  return {
    openings: await metric(reasoner, 'hopline_breaker_transitions_total', { downstream, to: 'open' }),
    failuresWhileClosed: await metric(reasoner, 'hopline_breaker_failures_total', { downstream, state: 'closed' }),
  };
}

/** A hop-reasoner's breakers by downstream, from its /healthz. */
async function breakerStates(reasoner: ServiceProcess): Promise<Record<string, string>> {
  const health = (await (await fetch(`${reasoner.opsUrl}/healthz`)).json()) as {
    details?: { breakers?: Record<string, string> };
  };
  return health.details?.breakers ?? {};
}

/** The questions a hop-reasoner is running, from its /healthz. */
async function questionsInFlight(reasoner: ServiceProcess): Promise<number> {
  const health = (await (await fetch(`${reasoner.opsUrl}/healthz`)).json()) as { details?: { inFlight?: number } };
  return health.details?.inFlight ?? 0;
}

async function breakerState(reasoner: ServiceProcess, downstream: string): Promise<string | undefined> {
  return (await breakerStates(reasoner))[downstream];
}

const rerankerReason = (outcome: AskOutcome) =>
  (outcome.done?.degradedReasons ?? []).some((reason) => /reranker/.test(reason));

export const baseline: Scenario = {
  id: 'baseline',
  fault: 'none (the healthy fleet, for comparison)',
  mustHold: 'all answered, no gaps (after as many questions to warm up, and every breaker closed)',
  async run(fleet, { questions }) {
    // Processes answer their first questions slowly (modules load, code warms up): not a fault.
    const warmUp = tally(await askMany(fleet, 'warm-up', questions).outcomes);
    // A cold call past its budget may open a hop-reasoner's breaker, which would degrade the
    // healthy figures every later scenario is held against: closed again first, and counted.
    await settle(fleet);
    const t = tally(await askMany(fleet, 'baseline', questions).outcomes);
    return {
      measured: `${describeTally(t)}; in the warm-up before it ${warmUp.degraded}/${warmUp.asked} degraded`,
      holds: t.answered === t.asked && t.gaps === 0,
      tally: t,
    };
  },
};

export const killReasoner: Scenario = {
  id: 'kill-reasoner',
  fault: '`kill -9` of a hop-reasoner running questions (one of two)',
  mustHold: '20/20 answered; added p95 ≤ 5 s',
  async run(fleet, { questions, baseline: before }) {
    const asks = askMany(fleet, 'kill-reasoner', questions);
    await waitFor(() => asks.started() === questions, { timeoutMs: 30_000, description: 'every question to start' });
    await fleet.reasoners[0]?.kill();
    const t = tally(await asks.outcomes);
    const added = t.p95 - (before?.p95 ?? 0);
    return {
      measured: `${describeTally(t)}; p95 ${seconds(added)} above the healthy fleet's`,
      holds: t.answered === t.asked && t.gaps === 0 && added <= 5_000,
      tally: t,
    };
  },
};

export const natsRestart: Scenario = {
  id: 'nats-restart',
  fault: 'NATS killed (SIGKILL), restarted after 3 s, questions in flight',
  mustHold: '0 hung streams, 0 silent gaps, ≥ 18/20 answered, the rest a clear error',
  async run(fleet, { questions }) {
    const asks = askMany(fleet, 'nats-restart', questions);
    await waitFor(() => asks.started() === questions, { timeoutMs: 30_000, description: 'every question to start' });
    await fleet.nats.stop('SIGKILL');
    // The fault itself: the server stays away for three seconds, as in the issue.
    await sleep(3_000);
    await fleet.nats.start();
    const t = tally(await asks.outcomes);
    return {
      measured: describeTally(t),
      holds:
        t.hung === 0 && t.gaps === 0 && t.cut === 0 && t.answered >= Math.ceil(0.9 * t.asked) && t.serverErrors === 0,
      tally: t,
    };
  },
};

export const frozenWorker: Scenario = {
  id: 'frozen-worker',
  fault: 'one of two retrieval workers frozen (`SIGSTOP`), the other healthy',
  mustHold: '20/20 answered within the normal p95 plus one hop budget',
  async run(fleet, { questions, baseline: before }) {
    const worker = fleet.workers[0] as ServiceProcess;
    worker.signal('SIGSTOP');
    try {
      const t = tally(await askMany(fleet, 'frozen-worker', questions).outcomes);
      const bound = (before?.p95 ?? 0) + RETRIEVE_BUDGET_MS;
      return {
        measured: `${describeTally(t)}; bound ${seconds(bound)} (healthy p95 + RETRIEVE_BUDGET_MS)`,
        holds: t.answered === t.asked && t.gaps === 0 && t.p95 <= bound,
        tally: t,
      };
    } finally {
      worker.signal('SIGCONT');
    }
  },
};

export const frozenReranker: Scenario = {
  id: 'frozen-reranker',
  fault: 'reranker frozen (`SIGSTOP`)',
  mustHold: 'breaker open within 2 failures; answers flagged degraded with fused order',
  async run(fleet, { questions }) {
    const before = await Promise.all(fleet.reasoners.map(rerankBreaker));
    fleet.reranker.signal('SIGSTOP');
    try {
      // One question at a time, so that every rerank call a breaker lets through times out alone.
      const outcomes: AskOutcome[] = [];
      for (const question of demoQuestions('frozen-reranker', questions)) {
        outcomes.push(
          await askStreaming(fleet.gatewayUrls[0] as string, fleet.apiKey, question, { giveUpMs: GIVE_UP_MS }),
        );
      }
      // The reranker stays frozen, so no breaker closes again in this scenario: the failures it
      // counted while closed are the ones before it opened.
      const beforeOpen = await Promise.all(
        fleet.reasoners.map(async (reasoner, i) => {
          const now = await rerankBreaker(reasoner);
          const earlier = before[i] as { openings: number; failuresWhileClosed: number };
          return now.openings === earlier.openings ? undefined : now.failuresWhileClosed - earlier.failuresWhileClosed;
        }),
      );
      const t = tally(outcomes);
      const fused = outcomes.filter(
        (outcome) => outcome.done?.degraded && outcome.done.degradedReasons.some((r) => /retrieval order/.test(r)),
      ).length;
      const opened = beforeOpen.filter((n) => n !== undefined);
      return {
        measured: `${describeTally(t)}; ${fused} flagged degraded keeping the fused order; breaker open on ${opened.length}/${fleet.reasoners.length} hop-reasoners, after ${opened.join(' and ') || '—'} failures the breaker counted`,
        holds:
          opened.length === fleet.reasoners.length &&
          opened.every((n) => n <= 2) &&
          t.answered === t.asked &&
          fused === t.answered,
        tally: t,
      };
    } finally {
      fleet.reranker.signal('SIGCONT');
    }
  },
};

export const workersWithoutId: Scenario = {
  id: 'workers-without-id',
  fault: 'two retrieval workers on one host, no `WORKER_ID` (each its own `DATA_DIR`)',
  mustHold: 'both indexes complete; 0 empty answers',
  async run(fleet, { questions }) {
    const chunks = await Promise.all(fleet.workers.map(indexedChunks));
    const t = tally(await askMany(fleet, 'workers-without-id', questions).outcomes);
    return {
      measured: `indexes hold ${chunks.join(' and ')} chunks of the ${fleet.documents} demo documents (one chunk each); ${describeTally(t)}; ${t.empty} empty answers (no text, or a "cannot answer" not flagged degraded), ${t.abstained} abstentions in all`,
      holds: chunks.every((n) => n >= fleet.documents && n === chunks[0]) && t.answered === t.asked && t.empty === 0,
      tally: t,
    };
  },
};

/** The full-fleet scenario's hop-reasoners' capacity, and how long the gateway waits for one to take a question. */
const FULL_FLEET = { maxConcurrentQuestions: 2, acceptTimeoutMs: 300 };

export const fullFleet: Scenario = {
  id: 'full-fleet',
  fault: `fleet at capacity (\`MAX_CONCURRENT_QUESTIONS=${FULL_FLEET.maxConcurrentQuestions}\` on both hop-reasoners, the gateway's \`ACCEPT_TIMEOUT_MS=${FULL_FLEET.acceptTimeoutMs}\`, all asked at once)`,
  mustHold:
    '0 HTTP 500; every refusal 429/503 with `Retry-After`; the fleet did refuse some, and ran none of them later',
  async run(fleet, { questions }) {
    // The demo questions are short: with the default accept timeout (2 s) a fleet of capacity 4
    // works through 20 of them before any waits that long, and nothing is refused. A short accept
    // timeout makes the queue full for real: a question no hop-reasoner takes within it is refused.
    const gateway = fleet.gateways[0] as ServiceProcess;
    await Promise.all([
      ...fleet.reasoners.map((reasoner) =>
        reasoner.restart({ MAX_CONCURRENT_QUESTIONS: String(FULL_FLEET.maxConcurrentQuestions) }),
      ),
      gateway.restart({ ACCEPT_TIMEOUT_MS: String(FULL_FLEET.acceptTimeoutMs) }),
    ]);
    try {
      const t = tally(await askMany(fleet, 'full-fleet', questions).outcomes);
      // A refused question's job is withdrawn: once the fleet is free, the hop-reasoners (started
      // afresh above, so their counts are this scenario's) must have reasoned through the answered
      // questions only, and hold none. A job left behind would be taken at once, well within this
      // wait, and be running (a question takes seconds on a loaded machine) or done.
      await sleep(2_000);
      const sum = (counts: number[]) => counts.reduce((total, count) => total + count, 0);
      const reasoned = sum(
        await Promise.all(fleet.reasoners.map((reasoner) => metric(reasoner, 'hopline_hops_per_question_count', {}))),
      );
      const running = sum(await Promise.all(fleet.reasoners.map(questionsInFlight)));
      return {
        measured: `${t.answered} answered, ${t.refused} refused (${t.refusedWithoutRetryAfter} without Retry-After), ${t.serverErrors} other 5xx, ${t.hung} hung, ${t.cut} cut; afterwards the hop-reasoners had reasoned through ${reasoned} questions and were running ${running}`,
        holds:
          t.refused > 0 &&
          t.serverErrors === 0 &&
          t.refusedWithoutRetryAfter === 0 &&
          t.hung === 0 &&
          t.cut === 0 &&
          t.answered + t.refused === t.asked &&
          reasoned === t.answered &&
          running === 0,
        tally: t,
      };
    } finally {
      await Promise.all([...fleet.reasoners.map((reasoner) => reasoner.restart()), gateway.restart()]);
    }
  },
};

export const rerankerRestart: Scenario = {
  id: 'reranker-restart',
  fault: 'reranker killed, then started again',
  mustHold: 'breaker closed ≤ 2 s after it is healthy',
  async run(fleet, { questions }) {
    const outcomes: Array<AskOutcome & { startedAt: number }> = [];
    let asking = true;
    // Two clients keep asking throughout, so that each hop-reasoner keeps calling the reranker.
    const clients = [0, 1].map(async (client) => {
      for (let i = 0; asking; i += 1) {
        const startedAt = Date.now();
        const question = demoQuestion(`reranker-restart ${client}`, i);
        const outcome = await askStreaming(fleet.gatewayUrls[client] as string, fleet.apiKey, question, {
          giveUpMs: GIVE_UP_MS,
        });
        outcomes.push({ ...outcome, startedAt });
      }
    });
    try {
      await fleet.reranker.kill();
      const allOpen = async () =>
        (await Promise.all(fleet.reasoners.map((r) => breakerState(r, 'reranker')))).every((s) => s !== 'closed');
      await waitFor(allOpen, { timeoutMs: 30_000, intervalMs: 50, description: 'both reranker breakers to open' });
      await fleet.reranker.restart();
      const healthyAt = Date.now();
      const closedAfter = await Promise.all(
        fleet.reasoners.map(async (reasoner) => {
          await waitFor(async () => (await breakerState(reasoner, 'reranker')) === 'closed', {
            timeoutMs: 30_000,
            intervalMs: 50,
            description: 'the reranker breaker to close',
          });
          return Date.now() - healthyAt;
        }),
      );
      const closedAt = healthyAt + Math.max(...closedAfter);
      // Answers asked once both breakers were closed must use the reranker again.
      const later = () => outcomes.filter((outcome) => outcome.startedAt >= closedAt);
      await waitFor(() => later().length >= Math.max(2, questions / 4), {
        timeoutMs: 60_000,
        description: 'answers after the breakers closed',
      });
      asking = false;
      await Promise.all(clients);
      const after = later();
      const stillDegraded = after.filter(rerankerReason).length;
      const t = tally(outcomes);
      return {
        measured: `breakers closed ${closedAfter.map(seconds).join(' and ')} after the reranker was healthy again; ${stillDegraded}/${after.length} later answers still degraded by it; over the run ${describeTally(t)}`,
        holds: closedAfter.every((ms) => ms <= 2_000) && stillDegraded === 0 && t.hung === 0 && t.gaps === 0,
        tally: t,
      };
    } finally {
      asking = false;
      await Promise.all(clients);
    }
  },
};

export const resumeElsewhere: Scenario = {
  id: 'resume-elsewhere',
  fault: 'each stream left after 2 events and resumed through the other gateway replica',
  mustHold: 'same events, none lost or repeated',
  async run(fleet, { questions }) {
    const [first, second] = fleet.gatewayUrls as [string, string];
    const results = await Promise.all(
      demoQuestions('resume-elsewhere', questions).map(async (question) => {
        const left = await askStreaming(first, fleet.apiKey, question, { giveUpMs: GIVE_UP_MS, leaveAfterEvents: 2 });
        const questionId = String(left.events[0]?.data.questionId ?? '');
        const rest = await resumeStreaming(second, fleet.apiKey, questionId, left.events.length, {
          giveUpMs: GIVE_UP_MS,
        });
        // The whole log again, read from the replica that accepted the question, to compare.
        const whole = await resumeStreaming(first, fleet.apiKey, questionId, 0, { giveUpMs: GIVE_UP_MS });
        const seen = [...left.events, ...rest.events];
        return { rest, same: sameEvents(seen, whole.events) && gapFree(seen) };
      }),
    );
    const t = tally(results.map((result) => result.rest));
    const same = results.filter((result) => result.same).length;
    // A resumed stream ends as its question did: with the answer, or with the error event its log
    // holds (a question that ran out of time on a loaded machine), which `same` shows the other
    // replica's whole log ends with too. What must hold is the resumption: every stream ended, and
    // with the log's events exactly once.
    const errors = Object.entries(t.reasons).map(([reason, count]) => `${count} × ${reason}`);
    return {
      measured: `${same}/${questions} resumed streams hold the question's events exactly once; resumed streams: ${t.answered} answered, ${t.clearErrors} clear errors${errors.length > 0 ? ` (${errors.join('; ')})` : ''}, ${t.hung} hung, ${t.cut} cut`,
      holds: same === questions && t.answered + t.clearErrors === questions,
      tally: t,
    };
  },
};

export const ingestUnderKills: Scenario = {
  id: 'ingest-under-kills',
  fault:
    '1,000 documents ingested (20 requests of 50) while each retrieval worker is killed (`kill -9`) and started again',
  mustHold: '0 lost, 0 duplicated (this already holds: keep it)',
  async run(fleet) {
    const total = 1_000;
    const perRequest = 50;
    const statuses: number[] = [];
    const restarts: Array<Promise<void>> = [];
    const before = await Promise.all(fleet.workers.map(indexedChunks));
    for (let first = 0; first < total; first += perRequest) {
      const documents = Array.from({ length: perRequest }, (_, i) => ({
        docId: `bulk-${first + i}`,
        title: `Bulk ${first + i}`,
        text: `Bulk document ${first + i} records serial number S${first + i}.`,
      }));
      const response = await fetch(`${fleet.gatewayUrls[0]}/v1/kbs/${BULK_KB}/documents`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${fleet.apiKey}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ documents }),
      });
      statuses.push(response.status);
      await response.body?.cancel();
      // The first worker dies a quarter of the way in, the second half way; each comes back.
      const victim = first === total / 4 ? fleet.workers[0] : first === total / 2 ? fleet.workers[1] : undefined;
      if (victim) restarts.push(victim.kill().then(() => victim.restart()));
    }
    await Promise.all(restarts);
    // Each document is one chunk: a worker holds exactly `total` more than before.
    const added = async () =>
      (await Promise.all(fleet.workers.map(workerIndex))).map((index, i) => ({
        lag: index.lag,
        chunks: index.chunks - (before[i] ?? 0),
      }));
    const settled = async () => {
      const indexes = await added();
      return indexes.every((index) => index.lag === 0 && index.chunks >= total) ? indexes : undefined;
    };
    const indexes = await waitFor(settled, {
      timeoutMs: 180_000,
      intervalMs: 500,
      description: 'both indexes to hold the bulk documents',
    }).catch(added);
    const accepted = statuses.filter((status) => status === 202).length * perRequest;
    const chunks = indexes.map((index) => index.chunks);
    return {
      measured: `${accepted}/${total} documents accepted (HTTP 202); the workers' indexes hold ${chunks.join(' and ')} of them (one chunk each)`,
      holds: accepted === total && chunks.every((n) => n === total),
    };
  },
};

function sameEvents(a: readonly StreamedEvent[], b: readonly StreamedEvent[]): boolean {
  return a.length === b.length && a.every((event, i) => event.id === b[i]?.id && event.name === b[i]?.name);
}

/** In priority order, after the baseline. */
export const SCENARIOS: readonly Scenario[] = [
  killReasoner,
  natsRestart,
  frozenWorker,
  frozenReranker,
  workersWithoutId,
  fullFleet,
  rerankerRestart,
  resumeElsewhere,
  ingestUnderKills,
  poisonInputs,
];

/**
 * Brings the fleet back after a scenario: every process running and healthy, and a question
 * answered through each gateway (a breaker a fault opened has closed again).
 */
export async function settle(fleet: Fleet): Promise<void> {
  await fleet.restore();
  for (const [index, url] of fleet.gatewayUrls.entries()) {
    let attempt = 0;
    await waitFor(
      async () =>
        (await askStreaming(url, fleet.apiKey, demoQuestion(`settle ${index}`, attempt++), { giveUpMs: GIVE_UP_MS }))
          .end === 'answered',
      { timeoutMs: 60_000, intervalMs: 500, description: `gateway ${index + 1} to answer again` },
    );
  }
  // A breaker a fault left open closes only on a call that succeeds, so questions are asked
  // until every one is closed: a reranker breaker left open by one scenario degraded the next.
  let asked = 0;
  await waitFor(
    async () => {
      const states = await Promise.all(fleet.reasoners.map(breakerStates));
      if (states.every((breakers) => Object.values(breakers).every((state) => state === 'closed'))) return true;
      const url = fleet.gatewayUrls[asked % fleet.gatewayUrls.length] as string;
      await askStreaming(url, fleet.apiKey, demoQuestion('settle breakers', asked++), { giveUpMs: GIVE_UP_MS });
      return false;
    },
    { timeoutMs: 60_000, intervalMs: 200, description: "every hop-reasoner's breakers to close" },
  );
}
