import type { Analysis__Output, AskCommand__Output, Chunk__Output } from '@hopline/contracts';
import { DecidedBy, Route } from '@hopline/contracts';
import { contentTerms } from '@hopline/text';
import { chunk } from './chunks.js';
import type {
  AnalyzerPort,
  CallContext,
  QaEventDraft,
  ReasoningSwitch,
  RerankerPort,
  RetrieveInput,
  RetrieverPort,
} from '../../src/index.js';
import { createHopReasoner } from '../../src/index.js';

/** A small knowledge base whose answers need a bridge: film → its star → her husband. */
export const corpus: Chunk__Output[] = [
  chunk(
    'film',
    'No Harbour (1936 film)',
    'No Harbour is a 1936 Velmarian mystery film directed by Osric Vell and starring Mirela Dunstan, Hale Corwin and Ivo Marsh.',
  ),
  chunk(
    'star',
    'Mirela Dunstan',
    'Mirela Dunstan was a British actress. In 1954 she became the wife of Tobias Wrenfield, a government minister.',
  ),
  chunk(
    'son',
    'Caspar Wrenfield',
    'Caspar Wrenfield is a novelist, the son of Tobias Wrenfield and his wife Mirela Dunstan.',
  ),
  chunk(
    'escape',
    'Harbour from T.K.',
    'Harbour from T.K. is a 1996 American action film written and directed by Edda Lindqvist.',
  ),
  chunk('lee', 'Osric Vell', 'Osric Vell was a British film director and screenwriter of the 1930s.'),
  chunk(
    'colwen',
    'River Colwen',
    'The River Colwen flows through Dunmore and is the longest river entirely in Velmar.',
  ),
  chunk('vanu', 'Sela Vanu', 'Sela Vanu is a 1992 Tamil drama film directed by R. Mahendravel.'),
  chunk('avoid', 'How To Lose Nothing', 'How To Lose Nothing is a 2009 short comedy film.'),
];

export const BRIDGE_QUESTION = 'Who was married to the star of No Harbour?';

export function analysis(overrides: Partial<Analysis__Output> = {}): Analysis__Output {
  return {
    route: Route.ITERATIVE,
    subQuestions: [],
    complexity: 2,
    signals: ['bridge:role-of'],
    hydeText: '',
    decidedBy: DecidedBy.RULES,
    fallbackReason: '',
    llmCalls: 0,
    tokens: 0,
    controls: null,
    ...overrides,
  };
}

export function fixedAnalyzer(result: Analysis__Output = analysis()): AnalyzerPort {
  return { analyze: async () => result };
}

export interface RecordingRetriever extends RetrieverPort {
  calls: RetrieveInput[];
}

/**
 * Term-overlap retrieval over a list of chunks, stamping the hop. `slow` queries wait for their
 * signal, as a well-behaved remote client does when the service hangs.
 */
export function overlapRetriever(
  chunks: readonly Chunk__Output[] = corpus,
  options: { slow?: (query: string) => boolean } = {},
): RecordingRetriever {
  const calls: RetrieveInput[] = [];
  return {
    calls,
    async retrieve(input: RetrieveInput, ctx: CallContext) {
      calls.push(input);
      if (options.slow?.(input.query)) {
        await new Promise<never>((_resolve, reject) =>
          ctx.signal.addEventListener(
            'abort',
            () => reject(ctx.signal.reason instanceof Error ? ctx.signal.reason : new Error('aborted')),
            { once: true },
          ),
        );
      }
      const wanted = new Set(contentTerms(input.query));
      const scored = chunks
        .map((candidate) => ({
          candidate,
          score: contentTerms(`${candidate.title} ${candidate.text}`).filter((term) => wanted.has(term)).length,
        }))
        .filter((entry) => entry.score > 0)
        .sort((a, b) => b.score - a.score)
        .slice(0, input.topK);
      return {
        chunks: scored.map(({ candidate }) => ({ ...candidate, hop: input.hop })),
        degraded: false,
        degradedReasons: [],
      };
    },
  };
}

export const keepOrder: RerankerPort = {
  async rerank(input) {
    return { chunks: input.chunks.slice(0, input.topN), fallback: false };
  },
};

export function ask(
  question = BRIDGE_QUESTION,
  options: { deadlineMs?: number; maxHops?: number } = {},
): AskCommand__Output {
  return {
    ctx: {
      questionId: 'q-1',
      scope: { tenantId: 't1', userId: 'u1', kbIds: ['kb1'], docIds: [] },
      deadlineUnixMs: Date.now() + (options.deadlineMs ?? 10_000),
    },
    question,
    maxHops: options.maxHops ?? 0,
  };
}

/** The events a question emitted, and helpers to read them. */
export function eventLog() {
  const events: QaEventDraft[] = [];
  return {
    events,
    emit: (event: QaEventDraft) => {
      events.push(event);
    },
    kinds: () => events.map((event) => event.event),
    of: <K extends QaEventDraft['event']>(kind: K) =>
      events.filter((event): event is Extract<QaEventDraft, { event: K }> => event.event === kind),
  };
}

/** The kinds in order with consecutive tokens collapsed: route, hopStarted, …, token, citations, done. */
export function shape(kinds: readonly string[]): string[] {
  return kinds.filter((kind, index) => kind !== 'token' || kinds[index - 1] !== 'token');
}

/**
 * Asks `question` of the offline loop over `chunks`, read as one lookup (SINGLE), as the rules
 * read a question with no bridge in its wording; `switchedOff` as `pnpm eval --ablate` sends them.
 */
export function askAsOneLookup(
  chunks: readonly Chunk__Output[],
  question: string,
  options: { topK: number; switchedOff?: ReasoningSwitch[] },
) {
  return createHopReasoner({
    analyzer: fixedAnalyzer(analysis({ route: Route.SINGLE, complexity: 1, signals: [] })),
    retriever: overlapRetriever(chunks),
    reranker: keepOrder,
    config: { topK: options.topK, switchedOff: options.switchedOff ?? [] },
  }).answer(ask(question), { emit: () => undefined });
}
