import * as grpc from '@grpc/grpc-js';
import { BusUnavailableError, type AskRequest__Output, type QaEvent } from '@hopline/contracts';
import { RETRY_AFTER_METADATA_KEY, toGrpcStatus, type StreamWriter } from '@hopline/grpc';
import { describe, expect, it } from 'vitest';
import { ApiKeyStore, generateApiKey, hashApiKey } from '../src/api-keys.js';
import type { AskService } from '../src/ask-service.js';
import { Drain } from '../src/drain.js';
import { answerGatewayHandlers, knowledgeBaseHandlers } from '../src/grpc-service.js';
import type { KbService } from '../src/kb-service.js';
import { toProblem } from '../src/problem.js';

// docs/events.md: where HTTP sends Retry-After, the gRPC trailer retry-after carries the same whole seconds.
const key = generateApiKey();
const keys = new ApiKeyStore({
  keys: [{ keyHash: hashApiKey(key), tenantId: 't1', userId: 'u1', kbIds: ['kb1'], canIngest: true }],
});
const metadata = () => {
  const m = new grpc.Metadata();
  m.set('authorization', `Bearer ${key}`);
  return m;
};
const busDown = () => new BusUnavailableError('message bus unavailable: the connection is closed');

async function grpcStatusOf(call: () => Promise<unknown>) {
  try {
    await call();
  } catch (error) {
    return toGrpcStatus(error);
  }
  throw new Error('the call did not fail');
}

describe('answer-gateway - gRPC statuses carry the Retry-After HTTP sends for the same failure', () => {
  it('retry-after - HTTP: a bus outage is 503 with Retry-After: 2', () => {
    const problem = toProblem(busDown());
    expect(problem.status).toBe(503);
    expect(problem.headers['Retry-After']).toBe('2');
  });

  it('retry-after - gRPC Ask resume while the bus is down: UNAVAILABLE with retry-after 2', async () => {
    const asks = { resume: () => Promise.reject(busDown()) } as unknown as AskService;
    const handlers = answerGatewayHandlers({ asks, drain: new Drain(), keys, askLimits: { maxQuestionChars: 2000 } });
    const stream = {
      metadata: metadata(),
      signal: new AbortController().signal,
      deadlineUnixMs: Infinity,
      peer: 'test',
      write: () => Promise.resolve(),
    } as StreamWriter<QaEvent>;
    const status = await grpcStatusOf(() =>
      handlers.Ask({ resumeQuestionId: 'q1', lastEventId: 3 } as AskRequest__Output, stream),
    );
    expect(status.code).toBe(grpc.status.UNAVAILABLE);
    expect(status.metadata.get(RETRY_AFTER_METADATA_KEY)).toEqual(['2']);
  });

  it('retry-after - gRPC KnowledgeBases.GetKb while the bus is down: UNAVAILABLE with retry-after 2', async () => {
    const kbs = { get: () => Promise.reject(busDown()) } as unknown as KbService;
    const handlers = knowledgeBaseHandlers({ kbs, drain: new Drain(), keys });
    const call = { metadata: metadata(), signal: new AbortController().signal, deadlineUnixMs: Infinity, peer: 'test' };
    const status = await grpcStatusOf(() => handlers.GetKb({ kbId: 'kb1' }, call));
    expect(status.code).toBe(grpc.status.UNAVAILABLE);
    expect(status.metadata.get(RETRY_AFTER_METADATA_KEY)).toEqual(['2']);
  });
});
