import { describe, expect, it } from 'vitest';
import { inProcessCall } from '../src/in-process-call.js';

/** The order of a callee's start and of a delivery queued for the next turn just before the call. */
async function orderAround(turnFirst: boolean): Promise<string[]> {
  const order: string[] = [];
  const analyze = inProcessCall(
    'query-understanding',
    'hopline.v1.QueryUnderstanding/Analyze',
    async (question: string) => {
      order.push('callee');
      return question.length;
    },
    { turnFirst },
  );
  // As the memory bus hands a stored event (the question's accepted) to the gateway on a later turn.
  setImmediate(() => order.push('delivered'));
  expect(await analyze('Who?')).toBe(4);
  await new Promise((resolve) => setImmediate(resolve));
  return order;
}

describe('embedded in-process calls', () => {
  it('embedded - a call that turns first lets what was queued before it go first: the question’s accepted reaches the gateway before the reasoning runs', async () => {
    expect(await orderAround(true)).toEqual(['delivered', 'callee']);
  });

  it('embedded - a call that does not turn first runs its callee at once', async () => {
    expect(await orderAround(false)).toEqual(['callee', 'delivered']);
  });

  it('embedded - a callee that fails rejects the call with its error', async () => {
    const rerank = inProcessCall('reranker', 'hopline.v1.Reranker/Rerank', async () => {
      throw new Error('rerank failed');
    });
    await expect(rerank()).rejects.toThrow('rerank failed');
  });
});
