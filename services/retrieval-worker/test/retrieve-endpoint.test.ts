import { describe, expect, it } from 'vitest';
import {
  RETRIEVE_HYDE_MAX_CHARS,
  RETRIEVE_MAX_SEEDS,
  RETRIEVE_QUERY_MAX_CHARS,
  ValidationError,
} from '@hopline/contracts';
import type { SeededRetrieveInput } from '@hopline/retrieval';
import { retrieveHandler, type RetrieveEndpointDeps, type VerifiedRetrieveRequest } from '../src/retrieve-endpoint.js';

/** A handler over a retriever that finds nothing and keeps what it was asked. */
function handlerRecording(asked: SeededRetrieveInput[]) {
  const ignored = { inc: () => undefined, observe: () => undefined };
  return retrieveHandler({
    workerId: 'worker-1',
    metrics: {
      degradedRetrievals: ignored,
      retrievalPathDuration: ignored,
      retrievalPathHits: ignored,
      retrievalFusedSize: ignored,
      entityGraphWalkDuration: ignored,
      seededRetrievals: ignored,
    } as unknown as RetrieveEndpointDeps['metrics'],
    changesWaiting: async () => false,
    retriever: {
      async retrieve(input) {
        asked.push(input);
        return {
          chunks: [],
          degraded: false,
          degradedReasons: [],
          timings: { bm25Ms: 0, vectorMs: 0, fusionMs: 0, graphMs: 0 },
          paths: [],
        };
      },
    },
  });
}

const request = (
  fields: Pick<VerifiedRetrieveRequest, 'query' | 'hydeText'> & Partial<Pick<VerifiedRetrieveRequest, 'seeds'>>,
): VerifiedRetrieveRequest => ({
  ctx: {
    questionId: 'q1',
    scope: { tenantId: 'acme', userId: '', kbIds: ['kb'], docIds: [] },
    deadlineUnixMs: Date.now() + 60_000,
  },
  topK: 5,
  hop: 1,
  seeds: [],
  ...fields,
});

describe('retrieval-worker - the bounds of a retrieve request', () => {
  it('retrieve - a query over the bound is refused, naming it, before the retriever tokenizes any of it', async () => {
    const asked: SeededRetrieveInput[] = [];
    const retrieve = handlerRecording(asked);
    const refusal = retrieve(request({ query: 'atlas '.repeat(RETRIEVE_QUERY_MAX_CHARS), hydeText: '' }));
    await expect(refusal).rejects.toBeInstanceOf(ValidationError);
    await expect(refusal).rejects.toThrow(String(RETRIEVE_QUERY_MAX_CHARS));
    expect(asked).toEqual([]);

    await retrieve(request({ query: 'a'.repeat(RETRIEVE_QUERY_MAX_CHARS), hydeText: '' }));
    expect(asked).toHaveLength(1);
  });

  it("retrieve - characters are counted as the gateway counts a question's: a question at its bound in emoji is a query within this one", async () => {
    const asked: SeededRetrieveInput[] = [];
    const retrieve = handlerRecording(asked);
    await retrieve(request({ query: '😀'.repeat(RETRIEVE_QUERY_MAX_CHARS), hydeText: '' }));
    expect(asked).toHaveLength(1);
    await expect(
      retrieve(request({ query: '😀'.repeat(RETRIEVE_QUERY_MAX_CHARS + 1), hydeText: '' })),
    ).rejects.toBeInstanceOf(ValidationError);
  });

  it('retrieve - too many seeds, or a seed longer than a query may be, is refused before the graph reads names from any', async () => {
    const asked: SeededRetrieveInput[] = [];
    const retrieve = handlerRecording(asked);
    await expect(
      retrieve(
        request({ query: 'q', hydeText: '', seeds: Array.from({ length: RETRIEVE_MAX_SEEDS + 1 }, () => 'Atlas') }),
      ),
    ).rejects.toThrow(String(RETRIEVE_MAX_SEEDS));
    await expect(
      retrieve(request({ query: 'q', hydeText: '', seeds: ['Atlas', 'a'.repeat(RETRIEVE_QUERY_MAX_CHARS + 1)] })),
    ).rejects.toBeInstanceOf(ValidationError);
    expect(asked).toEqual([]);
    await retrieve(
      request({ query: 'q', hydeText: '', seeds: Array.from({ length: RETRIEVE_MAX_SEEDS }, () => 'Atlas') }),
    );
    expect(asked).toHaveLength(1);
  });

  it('retrieve - a HyDE text over the bound is cut to it, never inside a surrogate pair, and the question still answered', async () => {
    const asked: SeededRetrieveInput[] = [];
    const retrieve = handlerRecording(asked);
    await retrieve(request({ query: 'who owns Atlas?', hydeText: 'b'.repeat(RETRIEVE_HYDE_MAX_CHARS * 3) }));
    await retrieve(request({ query: 'who owns Atlas?', hydeText: `${'b'.repeat(RETRIEVE_HYDE_MAX_CHARS - 1)}😀tail` }));
    expect(asked.map((input) => input.hydeText)).toEqual([
      'b'.repeat(RETRIEVE_HYDE_MAX_CHARS),
      'b'.repeat(RETRIEVE_HYDE_MAX_CHARS - 1),
    ]);
  });
});
