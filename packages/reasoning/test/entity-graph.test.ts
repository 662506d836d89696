import { describe, expect, it } from 'vitest';
import { createHopReasoner } from '../src/index.js';
import type { ReasoningSwitch } from '../src/index.js';
import { ask, fixedAnalyzer, keepOrder, overlapRetriever } from './support/fixtures.js';

describe('entity graph seeds', () => {
  it("graph - each hop sends its query and the previous hops' answers as seeds; entityGraph off sends none", async () => {
    const seedsOf = async (switchedOff: ReasoningSwitch[]) => {
      const retriever = overlapRetriever();
      const { trace } = await createHopReasoner({
        analyzer: fixedAnalyzer(),
        retriever,
        reranker: keepOrder,
        config: { topK: 4, switchedOff },
      }).answer(ask(), { emit: () => undefined });
      return { calls: retriever.calls, trace };
    };
    const on = await seedsOf([]);
    expect(on.trace.hops.length).toBeGreaterThan(1);
    const [first, second] = on.calls;
    expect(first?.seeds).toEqual([first?.query]);
    const firstAnswer = on.trace.hops[0]?.answer?.answer ?? '';
    expect(firstAnswer).not.toBe('');
    expect(second?.seeds).toContain(second?.query);
    expect(second?.seeds).toContain(firstAnswer);

    const off = await seedsOf(['entityGraph']);
    expect(off.calls.length).toBeGreaterThan(1);
    expect(off.calls.every((call) => call.seeds.length === 0)).toBe(true);
  });
});
