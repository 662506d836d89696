import type { Chunk__Output } from '@hopline/contracts';
import { describe, expect, it } from 'vitest';
import { createEntityGraph, createHopReasoner, entityGraphPort } from '../src/index.js';
import type { EntityGraphPort, GraphChunk, ReasoningSwitch } from '../src/index.js';
import { chunk } from './support/chunks.js';
import { ask, fixedAnalyzer, keepOrder, overlapRetriever } from './support/fixtures.js';

// Untitled chunks: the only way from the question to the birthplace is the name two of them share.
const collaborator = chunk('collab', '', 'Ada Lovelace wrote the first program with Charles Babbage in 1843.');
const birthplace = chunk('born', '', 'Charles Babbage came into the world in Walworth, Surrey.');
const further = chunk('walworth', '', 'Walworth lies south of the Thames.');
const unrelated = chunk('other', '', 'Grace Hopper wrote the first compiler.');

/** A retrieved chunk as the graph stores it: without per-query scores. */
function stored({ scores: _scores, foundBy: _foundBy, hop: _hop, ...kept }: Chunk__Output): GraphChunk {
  return kept;
}

function graphOf(...chunks: Chunk__Output[]) {
  const graph = createEntityGraph();
  for (const each of chunks) graph.add(stored(each));
  return graph;
}

describe('entity graph', () => {
  it('graph - personalized PageRank reaches a chunk through a shared name, nearer chunks first', () => {
    const graph = graphOf(collaborator, birthplace, further, unrelated);
    const ranked = graph.expand({ seeds: ['Where was the partner of Ada Lovelace born?'], limit: 10, kbIds: [] });
    expect(ranked.map(({ chunk: found }) => found.chunkId)).toEqual(['collab', 'born', 'walworth']);
  });

  it('graph - a seed that names no entity of the graph expands to nothing', () => {
    const graph = graphOf(collaborator, birthplace);
    expect(graph.expand({ seeds: ['Who wrote the first compiler?'], limit: 10, kbIds: [] })).toEqual([]);
  });

  it('graph - a name most chunks share is a hub the walk does not pass through', () => {
    const many = Array.from({ length: 30 }, (_, index) =>
      chunk(`news-${index}`, '', `Northwind Labs reported item ${index} to Carol Vance.`),
    );
    const graph = graphOf(collaborator, ...many, chunk('target', '', 'Carol Vance founded Harbor Analytics.'));
    // "Carol Vance" names 31 chunks: more than the hub limit, so it seeds nothing.
    expect(graph.expand({ seeds: ['Carol Vance'], limit: 5, kbIds: [] })).toEqual([]);
  });

  it('graph - only chunks of the asked knowledge bases come back, and a changed chunk is relinked', () => {
    const graph = graphOf(collaborator, { ...birthplace, kbId: 'kb2' });
    const ids = (kbIds: string[]) =>
      graph.expand({ seeds: ['Ada Lovelace'], limit: 10, kbIds }).map(({ chunk: found }) => found.chunkId);
    expect(ids(['kb1'])).toEqual(['collab']);
    expect(ids([])).toEqual(['collab', 'born']);
    graph.add({ ...stored(collaborator), text: 'Ada Lovelace wrote notes.' });
    expect(ids([])).toEqual(['collab']);
  });

  it('graph - a hop reranks the chunks the graph links beside the retrieved ones; entityGraph off leaves them out', async () => {
    const corpus = [collaborator, birthplace, further, unrelated];
    const expansions: string[][] = [];
    const port = entityGraphPort(graphOf(...corpus));
    const graph: EntityGraphPort = {
      async expand(input, ctx) {
        expansions.push(input.seeds);
        return port.expand(input, ctx);
      },
    };
    const evidence = async (switchedOff: ReasoningSwitch[]) => {
      const { trace } = await createHopReasoner({
        analyzer: fixedAnalyzer(),
        // Word overlap alone never reaches the birthplace: it shares no word with the question.
        retriever: overlapRetriever([collaborator, unrelated]),
        graph,
        reranker: keepOrder,
        config: { topK: 4, maxHops: 1, switchedOff },
      }).answer(ask('Where was the partner of Ada Lovelace born?', { maxHops: 1 }), { emit: () => undefined });
      return trace.hops[0]?.evidenceChunkIds ?? [];
    };
    expect(await evidence([])).toContain('born');
    expect(expansions[0]).toContain('Where was the partner of Ada Lovelace born?');
    expansions.length = 0;
    expect(await evidence(['entityGraph'])).not.toContain('born');
    expect(expansions).toEqual([]);
  });
});
