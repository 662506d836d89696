import * as grpc from '@grpc/grpc-js';
import type { AskRequest__Output } from '@hopline/contracts';
import { describe, expect, it } from 'vitest';
import type { AskServiceDeps } from '../src/ask-service.js';
import { AskService } from '../src/ask-service.js';
import { answerGatewayHandlers } from '../src/grpc-service.js';
import { keyStoreOf, testKeys } from './support/harness.js';

describe('gRPC Ask on a draining gateway', () => {
  it('answers UNAVAILABLE before it validates the body, as HTTP answers 503', async () => {
    const keys = testKeys();
    // A draining gateway reaches none of its dependencies for a new question.
    const asks = new AskService({} as AskServiceDeps);
    asks.stopAccepting();
    const { Ask } = answerGatewayHandlers({ asks, keys: keyStoreOf(keys), askLimits: { maxQuestionChars: 500 } });
    const metadata = new grpc.Metadata();
    metadata.set('authorization', `Bearer ${keys.bob.key}`);
    const stream = {
      metadata,
      signal: new AbortController().signal,
      deadlineUnixMs: Infinity,
      peer: 'test',
      write: async () => {},
    };
    const invalid = { question: '', kbIds: [], docIds: [], maxHops: 0, resumeQuestionId: '', lastEventId: 0 };
    await expect(Ask(invalid as unknown as AskRequest__Output, stream)).rejects.toMatchObject({
      code: 'unavailable',
      message: expect.stringContaining('shutting-down'),
    });
  });
});
