import {
  HoplineError,
  type AskRequest__Output,
  type ErrorCode,
  type Kb,
  type KbList,
  type KbRequest__Output,
  type QaEvent,
} from '@hopline/contracts';
import type { CallContext, StreamWriter } from '@hopline/grpc';
import { bearerToken, type ApiKeyStore, type Principal } from './api-keys.js';
import { parseAskBody, type AskLimits } from './ask-request.js';
import type { AskService } from './ask-service.js';
import type { Drain } from './drain.js';
import type { KbService } from './kb-service.js';
import { Problem, problems, toProblem } from './problem.js';

export interface AnswerGatewayHandlerDeps {
  asks: AskService;
  drain: Drain;
  keys: ApiKeyStore;
  askLimits: AskLimits;
}

export interface KnowledgeBaseHandlerDeps {
  kbs: KbService;
  drain: Drain;
  keys: ApiKeyStore;
}

// gRPC clients branch on the status code; the problem's slug stays readable in the details.
const CODE_BY_STATUS: Record<number, ErrorCode> = {
  400: 'invalid_argument',
  401: 'unauthenticated',
  403: 'permission_denied',
  404: 'not_found',
  409: 'cancelled',
  410: 'invalid_argument',
  413: 'invalid_argument',
  415: 'invalid_argument',
  429: 'resource_exhausted',
  503: 'unavailable',
  504: 'deadline_exceeded',
};

// The status message travels in the trailers, whose size the peer bounds (grpc-js: 8 KiB of
// metadata by default): past it the call never gets a status at all.
const MAX_STATUS_DETAIL_CHARS = 1_024;
const shortened = (detail: string) =>
  detail.length <= MAX_STATUS_DETAIL_CHARS ? detail : `${detail.slice(0, MAX_STATUS_DETAIL_CHARS)}… (shortened)`;

/** A Problem as the taxonomy error the gRPC server helper maps to a status. */
export function problemToGrpcError(problem: Problem): HoplineError {
  const retryAfter = problem.headers['Retry-After'];
  const code = problem.slug === 'conflict' ? 'conflict' : (CODE_BY_STATUS[problem.status] ?? 'internal');
  const detail = `${problem.slug}: ${shortened(problem.detail ?? problem.title)}${retryAfter ? ` (retry after ${retryAfter} s)` : ''}`;
  return new HoplineError(code, detail, {
    cause: problem,
    ...(retryAfter ? { retryAfterMs: Number(retryAfter) * 1000 } : {}),
  });
}

function authenticate(keys: ApiKeyStore, call: CallContext): Principal {
  const value = call.metadata.get('authorization')[0];
  const key = bearerToken(typeof value === 'string' ? value : undefined);
  if (!key) throw problems.unauthenticated('send the metadata entry "authorization: Bearer <api key>"');
  const principal = keys.verify(key);
  if (!principal) throw problems.unauthenticated('the API key is not known');
  return principal;
}

/**
 * A refusal as a gRPC status: a Problem as its status maps, and a failure HTTP answers with
 * Retry-After (the bus away, a read that timed out) as that problem, the trailer with it. Any
 * other error goes on as it is, for the server to map and log.
 */
function asGrpcError(error: unknown): unknown {
  if (error instanceof Problem) return problemToGrpcError(error);
  const problem = toProblem(error);
  return problem.headers['Retry-After'] ? problemToGrpcError(problem) : error;
}

/** A unary method of the key's caller, its refusals as gRPC statuses. */
function unary<Request, Response>(
  keys: ApiKeyStore,
  handle: (principal: Principal, request: Request) => Promise<Response>,
): (request: Request, call: CallContext) => Promise<Response> {
  return async (request, call) => {
    try {
      return await handle(authenticate(keys, call), request);
    } catch (error) {
      throw asGrpcError(error);
    }
  };
}

/**
 * `AnswerGateway.Ask`: the same questions and the same events as the SSE stream. A request
 * with `resume_question_id` continues that question after `last_event_id` instead of asking a
 * new one. Each write waits for the transport to drain, so a slow client slows only itself.
 */
export function answerGatewayHandlers(deps: AnswerGatewayHandlerDeps) {
  return {
    async Ask(request: AskRequest__Output, stream: StreamWriter<QaEvent>): Promise<void> {
      try {
        const principal = authenticate(deps.keys, stream);
        // Before the body is validated, as over HTTP; a resume reads a question under way.
        if (!request.resumeQuestionId) deps.drain.refuseNewWork();
        const question = request.resumeQuestionId
          ? await deps.asks.resume(principal, request.resumeQuestionId, request.lastEventId, 'grpc')
          : await deps.asks.ask(
              principal,
              parseAskBody(
                {
                  question: request.question,
                  // proto3 cannot tell "unset" from empty: no kbs means all the key's, 0 hops the default.
                  ...(request.kbIds.length > 0 ? { kbIds: request.kbIds } : {}),
                  ...(request.docIds.length > 0 ? { docIds: request.docIds } : {}),
                  ...(request.maxHops !== 0 ? { maxHops: request.maxHops } : {}),
                },
                deps.askLimits,
              ),
            );
        const afterSeq = request.resumeQuestionId ? request.lastEventId : 0;
        for await (const event of question.read(afterSeq, stream.signal)) await stream.write(event);
      } catch (error) {
        throw asGrpcError(error);
      }
    },
  };
}

/** `KnowledgeBases`: the kb resource, as over HTTP; a draining gateway refuses its writes, not its reads. */
export function knowledgeBaseHandlers(deps: KnowledgeBaseHandlerDeps) {
  return {
    CreateKb: unary(deps.keys, async (principal, request: KbRequest__Output): Promise<Kb> => {
      deps.drain.refuseNewWork();
      return (await deps.kbs.create(principal, request.kbId)).kb;
    }),
    GetKb: unary(deps.keys, (principal, request: KbRequest__Output): Promise<Kb> =>
      deps.kbs.get(principal, request.kbId),
    ),
    ListKbs: unary(deps.keys, (principal): Promise<KbList> => deps.kbs.list(principal)),
    DeleteKb: unary(deps.keys, async (principal, request: KbRequest__Output): Promise<Kb> => {
      deps.drain.refuseNewWork();
      return deps.kbs.delete(principal, request.kbId);
    }),
  };
}
