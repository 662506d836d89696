import { StopReason } from '@hopline/contracts';
import { describe, expect, it } from 'vitest';
import type { ReasoningSwitch } from '../src/index.js';
import { createHopReasoner, createOfflineReasoner } from '../src/index.js';
import { chunk } from './support/chunks.js';
import { callContext, hopInputs, secondHopOf } from './support/offline-hops.js';
import { analysis, ask, eventLog, fixedAnalyzer, keepOrder, overlapRetriever } from './support/fixtures.js';

const QUESTION = 'Who was the husband of the star of Night Ferry?';
const film = chunk(
  'c-film',
  'Night Ferry',
  'Night Ferry is a 1951 Norwegian drama film directed by Per Alm and starring Sigrid Holt and Erik Vang.',
);
// The first bridge read has no document; what names it crowds the next hop's ranking.
const crowd = [1, 2, 3, 4].map((n) =>
  chunk(`c-crowd-${n}`, `Harbour Revue ${n}`, `Sigrid Holt sang in Harbour Revue ${n}, staged by Per Alm in Bergen.`),
);
const erik = (text: string) => chunk('c-erik', 'Erik Vang', text);
const married = erik('Erik Vang (1920–1990) was a Norwegian actor, married to the painter Liv Dahl.');
const unmarried = erik('Erik Vang (1920–1990) was a Norwegian actor born in Tromso.');

function answer(corpus: ReturnType<typeof chunk>[], switchedOff: ReasoningSwitch[] = []) {
  const retriever = overlapRetriever(corpus);
  const reasoner = createHopReasoner({
    analyzer: fixedAnalyzer(analysis()),
    retriever,
    reranker: keepOrder,
    config: { topK: 4, switchedOff },
  });
  return reasoner.answer(ask(QUESTION), { emit: eventLog().emit }).then(({ done }) => ({ done, retriever }));
}

describe('bridge beam - a hop that finds nothing for the first bridge tries the runner-ups, each alone', () => {
  it('bridge beam - a runner-up whose document states the relation becomes the bridge, and the chain answers', async () => {
    const { done, retriever } = await answer([film, ...crowd, married]);
    expect(done).toMatchObject({ stopReason: StopReason.SUFFICIENT, abstained: false });
    expect(done.answer).toMatch(/^Liv Dahl \[\d\]\./);
    // The first bridge's hop, then each runner-up alone: one with no document, then the one that answers.
    expect(retriever.calls.map((call) => call.query).slice(1)).toEqual([
      'Sigrid Holt Per Alm Erik Vang husband',
      'Per Alm husband',
      'Erik Vang husband',
    ]);
  });

  it('bridge beam - switched off, the chain breaks where the first bridge led nowhere', async () => {
    const { done, retriever } = await answer([film, ...crowd, married], ['bridgeBeam']);
    expect(done).toMatchObject({ stopReason: StopReason.UNKNOWN, abstained: true });
    expect(retriever.calls).toHaveLength(3);
  });

  it('bridge beam - a runner-up whose document does not state the relation is no bridge: the answer abstains, after two tries at most', async () => {
    const { done, retriever } = await answer([film, ...crowd, unmarried]);
    expect(done).toMatchObject({ stopReason: StopReason.UNKNOWN, abstained: true });
    expect(done.answer).not.toMatch(/Tromso/);
    // The two hops, the two runner-ups, and the whole question once.
    expect(retriever.calls).toHaveLength(5);
  });
});

describe('bridge beam - the offline reasoner', () => {
  const reasoner = createOfflineReasoner();
  const step = hopInputs(QUESTION, [film]);

  it('bridge beam - a hop that reads bridges offers the runner-ups, each with a query of its own', async () => {
    const first = await reasoner.extractHopAnswer(step({}), callContext());
    expect(first.bridgeEntities[0]).toBe('Sigrid Holt');
    expect(first.runnerUps?.map((runnerUp) => runnerUp.bridge)).toEqual(first.bridgeEntities.slice(1));
    expect(first.runnerUps?.map((runnerUp) => runnerUp.nextQuery)).toEqual(['Per Alm husband', 'Erik Vang husband']);
  });

  it('bridge beam - a hop following a runner-up answers only from a document that states the relation', async () => {
    const first = await reasoner.extractHopAnswer(step({}), callContext());
    const followed = { ...first, answer: 'Erik Vang', bridgeEntities: ['Erik Vang'] };
    const second = (chunks: ReturnType<typeof chunk>[], followsRunnerUp: boolean, read = reasoner) =>
      read.extractHopAnswer(
        step({ ...secondHopOf(QUESTION, followed, [film], chunks), followsRunnerUp }),
        callContext(),
      );
    expect(await second([married], true)).toMatchObject({ unknown: false, answer: 'Liv Dahl' });
    expect(await second([unmarried], true)).toMatchObject({ unknown: true });
    // The same document read for the first bridge answers (where no role check asks more): the chain itself led there.
    const withoutRoleCheck = createOfflineReasoner({ switchedOff: ['askedRole'] });
    expect(await second([unmarried], false, withoutRoleCheck)).toMatchObject({ unknown: false });
    expect(await second([unmarried], true, withoutRoleCheck)).toMatchObject({ unknown: true });
  });
});
