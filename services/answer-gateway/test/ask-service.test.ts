import { describe, expect, it } from 'vitest';
import type { Admission } from '../src/admission.js';
import type { Principal } from '../src/api-keys.js';
import { AskService } from '../src/ask-service.js';
import type { AnswerCache } from '../src/cache/answer-cache.js';
import { Drain } from '../src/drain.js';
import type { QuestionRegistry } from '../src/question-registry.js';

const principal: Principal = { keyId: 'k1', tenantId: 'acme', userId: 'ada', kbIds: ['projects'], canIngest: false };

describe('answer-gateway ask service', () => {
  it("shutdown - an ask that was waiting on its key's rate when the gateway began to drain is refused, never started", async () => {
    let charged: () => void = () => undefined;
    const started: string[] = [];
    const drain = new Drain();
    const asks = new AskService({
      registry: {
        start: (spec: { questionId: string }) => {
          started.push(spec.questionId);
          return Promise.reject(new Error('not in this test'));
        },
      } as unknown as QuestionRegistry,
      cache: { keyFor: () => Promise.resolve(undefined) } as unknown as AnswerCache,
      admission: {
        chargeKey: () => new Promise<void>((resolve) => (charged = resolve)),
        checkCapacity: () => undefined,
      } as unknown as Admission,
      drain,
      controls: () => ({ multiHop: true, hopCap: 0 }),
      settings: { questionTimeoutMs: 30_000, defaultMaxHops: 3 },
    });
    const asking = asks.ask(principal, { question: 'Who owns Project Atlas?' });
    drain.begin();
    charged();
    await expect(asking).rejects.toMatchObject({ status: 503, slug: 'shutting-down' });
    expect(started).toEqual([]);
  });
});
