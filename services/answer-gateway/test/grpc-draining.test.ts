import * as grpc from '@grpc/grpc-js';
import type { AskRequest__Output } from '@hopline/contracts';
import { describe, expect, it } from 'vitest';
import type { AskService } from '../src/ask-service.js';
import { Drain } from '../src/drain.js';
import { answerGatewayHandlers, knowledgeBaseHandlers } from '../src/grpc-service.js';
import type { KbService, KbView } from '../src/kb-service.js';
import { keyStoreOf, testKeys } from './support/harness.js';

function callOf(key: string) {
  const metadata = new grpc.Metadata();
  metadata.set('authorization', `Bearer ${key}`);
  return { metadata, signal: new AbortController().signal, deadlineUnixMs: Infinity, peer: 'test' };
}

function drained(): Drain {
  const drain = new Drain();
  drain.begin();
  return drain;
}

const shuttingDown = { code: 'unavailable', message: expect.stringContaining('shutting-down') };

describe('gRPC on a draining gateway', () => {
  it('answers UNAVAILABLE before it validates the body, as HTTP answers 503', async () => {
    const keys = testKeys();
    // A draining gateway reaches none of its dependencies for a new question.
    const asks = {} as AskService;
    const { Ask } = answerGatewayHandlers({
      asks,
      drain: drained(),
      keys: keyStoreOf(keys),
      askLimits: { maxQuestionChars: 500 },
    });
    const stream = { ...callOf(keys.bob.key), write: async () => {} };
    const invalid = { question: '', kbIds: [], docIds: [], maxHops: 0, resumeQuestionId: '', lastEventId: 0 };
    await expect(Ask(invalid as unknown as AskRequest__Output, stream)).rejects.toMatchObject(shuttingDown);
  });

  it('KnowledgeBases refuses CreateKb and DeleteKb with UNAVAILABLE, and still answers GetKb and ListKbs', async () => {
    const keys = testKeys();
    const kb: KbView = { kbId: 'handbook', documents: 0, chunks: 0, createdUnixMs: 1 };
    const writes: string[] = [];
    const kbs = {
      create: (_principal: unknown, kbId: string) => {
        writes.push(`create ${kbId}`);
        return Promise.resolve({ kb, created: true });
      },
      delete: (_principal: unknown, kbId: string) => {
        writes.push(`delete ${kbId}`);
        return Promise.resolve(kb);
      },
      get: () => Promise.resolve(kb),
      list: () => Promise.resolve({ kbs: [kb], indexLag: [] }),
    } as unknown as KbService;
    const handlers = knowledgeBaseHandlers({ kbs, drain: drained(), keys: keyStoreOf(keys) });
    const call = callOf(keys.alice.key);

    await expect(handlers.CreateKb({ kbId: 'handbook' }, call)).rejects.toMatchObject(shuttingDown);
    await expect(handlers.DeleteKb({ kbId: 'handbook' }, call)).rejects.toMatchObject(shuttingDown);
    expect(writes).toEqual([]);
    await expect(handlers.GetKb({ kbId: 'handbook' }, call)).resolves.toEqual(kb);
    await expect(handlers.ListKbs({}, call)).resolves.toMatchObject({ kbs: [kb] });
  });
});
