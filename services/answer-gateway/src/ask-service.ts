import { randomUUID } from 'node:crypto';
import { context, trace } from '@opentelemetry/api';
import { instrument, withQuestionId } from '@hopline/telemetry';
import {
  isBusUnavailable,
  toHoplineError,
  subjectToken,
  type OperatorControls__Output,
  type QaEvent__Output,
} from '@hopline/contracts';
import type { Admission } from './admission.js';
import type { Principal } from './api-keys.js';
import { resolveKbScope, type AskBody } from './ask-request.js';
import type { AnswerCache } from './cache/answer-cache.js';
import type { Drain } from './drain.js';
import { problems, toProblem, type Problem } from './problem.js';
import type { QuestionHandle, QuestionRegistry } from './question-registry.js';
import type { QuestionRun } from './question-run.js';

/** What both transports read: a question's events after a given seq, ending with its terminal one. */
export interface QuestionStream {
  readonly questionId: string;
  readonly cached: boolean;
  read(afterSeq: number, signal: AbortSignal): AsyncGenerator<QaEvent__Output>;
}

export interface AskSettings {
  questionTimeoutMs: number;
  defaultMaxHops: number;
}

export interface AskServiceDeps {
  registry: QuestionRegistry;
  cache: AnswerCache;
  admission: Admission;
  drain: Drain;
  /** The operators' controls in force now (multi-hop, hop cap): part of an answer's cache key. */
  controls: () => OperatorControls__Output;
  settings: AskSettings;
  onResume?: (transport: 'sse' | 'grpc') => void;
}

/**
 * The gateway's behaviour behind both transports: admission, scope, the answer cache, and
 * starting, resuming and cancelling questions. Failures are Problems, which each transport
 * maps to its own status codes.
 */
export class AskService {
  constructor(private readonly deps: AskServiceDeps) {}

  /**
   * Checks the request against the key's scope and starts the question, or replays its cached
   * answer. The body is validated once, by the transport that received it (`parseAskBody`).
   */
  async ask(principal: Principal, body: AskBody): Promise<QuestionStream> {
    const { settings, cache, admission, registry, drain } = this.deps;
    drain.refuseNewWork();
    const kbIds = resolveKbScope(principal, body.kbIds);
    await admission.chargeKey(principal.keyId);
    const maxHops = body.maxHops ?? settings.defaultMaxHops;
    const scope = {
      tenantId: principal.tenantId,
      userId: principal.userId,
      kbIds,
      docIds: body.docIds ? [...new Set(body.docIds)] : [],
    };
    const questionId = randomUUID();
    // Everything the question does from here on, in every service, carries its id in the baggage.
    const inQuestion = withQuestionId(questionId);
    const span = trace.getActiveSpan();
    span?.setAttributes({
      'hopline.question_id': questionId,
      'hopline.tenant_id': principal.tenantId,
      'hopline.max_hops': maxHops,
    });

    const cacheKey = await cache.keyFor(scope, body.question, { maxHops, ...this.deps.controls() });
    const cached =
      cacheKey === undefined
        ? undefined
        : await instrument('answer cache lookup', { parent: inQuestion }, async (lookup) => {
            const found = await cache.get(cacheKey);
            lookup.setAttribute('hopline.cache.hit', found !== undefined);
            return found;
          });
    span?.setAttribute('hopline.cache_hit', cached !== undefined);
    // A cached answer names the question that computed it: its trace is that question's.
    if (cached) {
      return replayOf({
        questionId: cached.questionId,
        seq: 1,
        attempt: 1,
        atUnixMs: Date.now(),
        event: 'done',
        done: cached.done,
      });
    }

    // No await between the capacity check and the registration: concurrent asks cannot both slip
    // in, and one that was waiting on the key's rate or the cache when the gateway began to drain
    // is refused here, not registered after the drain found no question to cancel.
    drain.refuseNewWork();
    admission.checkCapacity(scope.tenantId);
    let run: QuestionRun;
    try {
      run = await context.with(inQuestion, () =>
        registry.start({
          questionId,
          question: body.question,
          scope,
          maxHops,
          deadlineUnixMs: Date.now() + settings.questionTimeoutMs,
        }),
      );
    } catch (error) {
      throw notAccepted(error);
    }
    if (cacheKey !== undefined) {
      void run.finished.then(async (terminal) => {
        if (terminal.event === 'done' && terminal.done) await cache.put(cacheKey, { questionId, done: terminal.done });
      });
    }
    return { questionId, cached: false, read: (afterSeq, signal) => run.read(afterSeq, signal) };
  }

  /** The caller's own question, readable after `lastEventId`; 404 for unknown or other callers' questions. */
  async resume(
    principal: Principal,
    questionId: string,
    lastEventId: number,
    transport: 'sse' | 'grpc',
  ): Promise<QuestionStream> {
    const run = await this.find(principal, questionId);
    if (lastEventId > run.latestSeq) {
      if (lastEventId === run.latestSeq + 1 && (await run.endWasDue()))
        throw problems.resumeUnavailable(
          'the stream already ended: a gateway ended it, as no hop-reasoner wrote its end',
        );
      throw problems.invalidRequest(
        `the last event id ${lastEventId} is ahead of the question's events (latest ${run.latestSeq})`,
      );
    }
    if (run.terminal && lastEventId >= run.terminal.seq)
      throw problems.resumeUnavailable('the stream already ended with its terminal event');
    this.deps.onResume?.(transport);
    return { questionId, cached: false, read: (afterSeq, signal) => run.read(afterSeq, signal) };
  }

  /** Cancels the caller's own running question at once. */
  async cancel(principal: Principal, questionId: string): Promise<{ cancelled: boolean }> {
    const question = await this.find(principal, questionId);
    return { cancelled: await question.cancel('client_request') };
  }

  private async find(principal: Principal, questionId: string): Promise<QuestionHandle> {
    let id: string;
    try {
      id = subjectToken(questionId, 'question id');
    } catch {
      throw problems.notFound('no such question');
    }
    const run = await this.deps.registry.find(id, principal);
    if (!run) throw problems.notFound('no such question, or it ended longer ago than the resume window');
    return run;
  }
}

// The questions a full fleet or a dead one refuses can be asked again shortly.
const NOT_ACCEPTED_RETRY_MS = 1_000;

/** Why a question could not start, as the 503 a client can retry after. */
function notAccepted(error: unknown): Problem {
  if (isBusUnavailable(error)) return toProblem(error);
  const failure = toHoplineError(error);
  switch (failure.code) {
    case 'invalid_argument':
      return problems.invalidRequest(failure.message);
    case 'deadline_exceeded':
      return problems.unavailable(
        'no hop-reasoner took the question in time: all are busy or none is running',
        NOT_ACCEPTED_RETRY_MS,
      );
    case 'breaker_open':
      return problems.unavailable(
        'no hop-reasoner took the recent questions in time; retry later',
        NOT_ACCEPTED_RETRY_MS,
      );
    default:
      return problems.unavailable(failure.message, NOT_ACCEPTED_RETRY_MS);
  }
}

/** A stream of events known up front (a cached answer). */
function replayOf(event: QaEvent__Output): QuestionStream {
  return {
    questionId: event.questionId,
    cached: true,
    async *read(afterSeq) {
      if (event.seq > afterSeq) yield event;
    },
  };
}
