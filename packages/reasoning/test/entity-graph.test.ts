import { describe, expect, it } from 'vitest';
import { chunkEntities, createHopReasoner } from '../src/index.js';
import type { ReasoningSwitch } from '../src/index.js';
import { ask, fixedAnalyzer, keepOrder, overlapRetriever } from './support/fixtures.js';

describe('entity graph seeds', () => {
  it("graph - a chunk's entities are its title and the names it states, keyed as the reasoner compares names", () => {
    expect(chunkEntities('The Saturdays', 'Frankie Sandford joined "Girls Aloud" in London.')).toEqual(
      expect.arrayContaining(['saturday', 'frankie sandford', 'girl aloud', 'london']),
    );
    expect(chunkEntities('', '负责人是李明，隶属于数据平台部。')).toEqual(
      expect.arrayContaining(['李明', '数据 平台 部']),
    );
    expect(chunkEntities('', 'nothing here is named.')).toEqual([]);
  });

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
