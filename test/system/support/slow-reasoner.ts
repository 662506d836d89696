import type { Done__Output, ReasoningTrace__Output } from '@hopline/contracts';
import type { HopReasoner } from '@hopline/reasoning';

const done: Done__Output = {
  answer: 'done',
  citations: [],
  stopReason: 'SUFFICIENT',
  hops: 1,
  timings: null,
  route: 'SINGLE',
  abstained: false,
  degraded: false,
  degradedReasons: [],
  llmCalls: 0,
  tokens: 0,
  cached: false,
};

/**
 * A reasoner in place of the real loop, whose only job is to take time: a route and a first
 * hop's answer (a round, whose trace the hop-reasoner stores a while later), then a token every
 * `intervalMs`, then done. It stops when its signal aborts, as the real one does.
 */
export function slowReasoner(options: { tokens: number; intervalMs: number }): HopReasoner {
  return {
    async answer(ask, { signal, emit }) {
      const questionId = ask.ctx?.questionId ?? '';
      await emit({ questionId, atUnixMs: Date.now(), event: 'route', route: { route: 'SINGLE' } });
      await emit({
        questionId,
        atUnixMs: Date.now(),
        event: 'hopAnswer',
        hopAnswer: { hop: 1, query: ask.question, answer: 'partly', citedChunkIds: [] },
      });
      for (let i = 0; i < options.tokens; i++) {
        if (signal?.aborted) throw signal.reason;
        await emit({ questionId, atUnixMs: Date.now(), event: 'token', token: { text: `t${i} ` } });
        await new Promise((resolve) => setTimeout(resolve, options.intervalMs));
      }
      await emit({ questionId, atUnixMs: Date.now(), event: 'done', done });
      return { done, trace: { questionId, stopReason: 'SUFFICIENT', hops: [] } as unknown as ReasoningTrace__Output };
    },
  };
}
