import type { Chunk__Output } from '@hopline/contracts';
import { createAnalyzer, createHopReasoner, type RerankerPort, type RetrieverPort } from '@hopline/reasoning';

/**
 * Invented two-hop questions in both scripts the reasoning reads (a Chinese one loads jieba's
 * dictionary), each over its own invented documents: the first names the bridge, the second
 * states the answer about it.
 */
const WARM_UP_QUESTIONS = [
  {
    question: 'Which river flows past the town where the lighthouse keeper Aldo Fenwick was born?',
    documents: [
      ['Aldo Fenwick', 'Aldo Fenwick, the lighthouse keeper, was born in Marrowby in 1911.'],
      ['Marrowby', 'Marrowby is a small town on the banks of the river Sellen.'],
    ],
  },
  {
    question: '灯塔看守人林海生出生的小镇旁边流过哪条河？',
    documents: [
      ['', '灯塔看守人林海生一九一一年出生在青禾镇。'],
      ['', '青禾镇是一个小镇，旁边流过白溪河。'],
    ],
  },
];

const WARM_UP_SCOPE = { tenantId: 'warm-up', userId: 'warm-up', kbIds: ['warm-up'], docIds: [] };

function warmUpChunk(title: string, text: string, index: number): Chunk__Output {
  return {
    chunkId: `warm-up-${index}`,
    tenantId: WARM_UP_SCOPE.tenantId,
    kbId: 'warm-up',
    docId: `warm-up-${index}`,
    docVersion: 1,
    title,
    text,
    span: { start: 0, end: text.length },
    dedupeKey: `warm-up-${index}`,
    scores: null,
    foundBy: 'BM25',
    hop: 1,
    effectiveDate: '',
    sourceUri: '',
  };
}

const keepOrder: RerankerPort = {
  rerank: async (input) => ({ chunks: input.chunks.slice(0, input.topN), fallback: false }),
};

/**
 * The whole loop (the rules' analysis, hops, evidence, the offline answer) on the invented
 * questions, with retrieval answering from their own documents: the reasoning's code and
 * dictionaries load before the reasoner takes a question. Cold, its first questions ran long
 * enough on a loaded machine for their leases to lapse and their downstream calls to miss their
 * budgets. Nothing leaves the process: no call reaches query-understanding, a retrieval worker,
 * the reranker or a model, and no event is written.
 */
export function warmUpCalls(): Array<() => Promise<unknown>> {
  return WARM_UP_QUESTIONS.map(({ question, documents }, questionIndex) => () => {
    const chunks = documents.map(([title = '', text = ''], index) => warmUpChunk(title, text, index));
    const retriever: RetrieverPort = {
      retrieve: async (input) => ({
        chunks: chunks.map((chunk) => ({ ...chunk, hop: input.hop })),
        degraded: false,
        degradedReasons: [],
      }),
    };
    const reasoner = createHopReasoner({ analyzer: createAnalyzer(), retriever, reranker: keepOrder });
    return reasoner.answer(
      {
        ctx: { questionId: `warm-up-${questionIndex}`, scope: WARM_UP_SCOPE, deadlineUnixMs: Date.now() + 60_000 },
        question,
        maxHops: 0,
      },
      { emit: () => undefined },
    );
  });
}
