import { Route, StopReason, ValidationError } from '@hopline/contracts';
import { describe, expect, it } from 'vitest';
import { analyzeByRules, createHopReasoner, REASONING_SWITCH_NAMES, resolveSettings } from '../src/index.js';
import type { ReasoningSwitch } from '../src/index.js';
import { isAbout } from '../src/offline/bridge.js';
import { bareTitle, titleConventions } from '../src/offline/text.js';
import { chunk } from './support/chunks.js';
import {
  analysis,
  ask,
  BRIDGE_QUESTION,
  corpus,
  fixedAnalyzer,
  keepOrder,
  overlapRetriever,
} from './support/fixtures.js';

const ROLE_COMPARISON = 'Which film has the director born later, Cobalt Ridge Riders or Grey Lanterns?';

describe('reasoning switches', () => {
  it('switches - every rule and mechanism is on unless named; an unknown name is refused', () => {
    expect(resolveSettings().switchedOff).toEqual([]);
    expect(resolveSettings({ switchedOff: ['entityGraph'] }).switchedOff).toEqual(['entityGraph']);
    expect(() => resolveSettings({ switchedOff: ['noSuchRule' as ReasoningSwitch] })).toThrow(ValidationError);
    expect(REASONING_SWITCH_NAMES).toEqual(
      expect.arrayContaining(['parallelPlans', 'determinedRole', 'unknownFusion', 'entityGraph']),
    );
  });

  it('switches - parallelPlans off keeps a multi-focus question off the PARALLEL route', () => {
    const question = 'Which came out first, No Harbour or Harbour from T.K.?';
    expect(analyzeByRules(question).route).toBe(Route.PARALLEL);
    const without = analyzeByRules(question, ['parallelPlans']);
    expect(without.route).not.toBe(Route.PARALLEL);
    expect(without.subQuestions).toEqual([]);
  });

  it('switches - roleAsked: a role "who" asks for adds no hop; off, it plans one hop more', () => {
    const asked = [
      'Who coaches the player who scored the winning goal in Velmar?',
      'Who is the coach of the player who scored the winning goal in Velmar?',
    ];
    for (const question of asked) {
      expect(analyzeByRules(question).complexity, question).toBe(2);
      expect(analyzeByRules(question, ['roleAsked']).complexity, question).toBe(3);
    }
    // A role the question passes through, not the one "who" asks for, is still a link.
    expect(analyzeByRules('Which town is the coach of the player from Velmar from?').complexity).toBe(2);
  });

  it('switches - determinedRole off plans a role comparison in one layer, without role-holder finders', () => {
    const layered = analyzeByRules(ROLE_COMPARISON).subQuestions.map((sub) => sub.dependsOn);
    expect(layered).toEqual([[], [], ['q1'], ['q2']]);
    const flat = analyzeByRules(ROLE_COMPARISON, ['determinedRole']).subQuestions.map((sub) => sub.dependsOn);
    expect(flat).toEqual([[], []]);
  });

  it("switches - ownFocusWords off lets chunks that state only the sub-questions' shared words take a focus's evidence slots", async () => {
    // Two items asked with one setting and predicate; the shows state the shared words more often
    // than the item's own report does.
    const news = [
      chunk('show-1', '', '2031年6月，澜沧市举办图书展览和读书论坛，读者参加展览。'),
      chunk('show-2', '', '2031年6月，霞浦县举办灯会展览和旅游论坛，市民参加论坛。'),
      chunk('show-3', '', '2031年6月，青川镇举办农业展览和乡村论坛，农户参加论坛。'),
      chunk('liu', '', '2031年6月3日，柳文川在青川出席座谈会并发表讲话。'),
      chunk('beiling', '', '2031年6月9日，北岭集团召开新品推介会，推出新款芯片。'),
    ];
    const plan = analysis({
      route: Route.PARALLEL,
      signals: ['separately:items'],
      subQuestions: [
        { id: 'q1', text: '2031年6月柳文川参加了展览与论坛', dependsOn: [] },
        { id: 'q2', text: '2031年6月北岭集团参加了展览与论坛', dependsOn: [] },
      ],
    });
    const evidence = async (switchedOff: ReasoningSwitch[]) => {
      const { trace } = await createHopReasoner({
        analyzer: fixedAnalyzer(plan),
        retriever: overlapRetriever(news),
        reranker: keepOrder,
        config: { topK: 4, maxEvidenceChunks: 3, switchedOff },
      }).answer(ask('2031年6月，柳文川和北岭集团分别参加了哪些展览与论坛？'), { emit: () => undefined });
      return trace.finalEvidenceChunkIds;
    };
    // The hops cite the shows (they state the most of each sub-question); after them, the
    // first slot goes to the first focus's own report, not to its list's next show.
    expect(await evidence([])).toContain('liu');
    expect(await evidence(['ownFocusWords'])).not.toContain('liu');
  });

  it("switches - uncitedFoci off leaves a focus whose hop cited nothing behind the other foci's runners-up", async () => {
    // Three events compared by date; the match's only chunk names one side of it, so its hop
    // cites nothing, while each other event has two dated reports, both cited.
    const news = [
      chunk('bridge-1', '', '2031年3月2日，澜江大桥通车，全长两千米。'),
      chunk('bridge-2', '', '2031年3月5日，澜江大桥通车后车流平稳。'),
      chunk('eagles', '', '雄鹰队主场训练备战，球员状态良好。'),
      chunk('bay-1', '', '2031年5月8日，北湾港区启用，首艘货轮靠泊。'),
      chunk('bay-2', '', '2031年5月9日，北湾港区启用次日吞吐量创新高。'),
    ];
    const plan = analysis({
      route: Route.PARALLEL,
      signals: ['events:timed'],
      subQuestions: [
        { id: 'q1', text: '澜江大桥通车', dependsOn: [] },
        { id: 'q2', text: '雄鹰队对猛虎队的比赛', dependsOn: [] },
        { id: 'q3', text: '北湾港区启用', dependsOn: [] },
      ],
    });
    const evidence = async (switchedOff: ReasoningSwitch[]) => {
      const { trace } = await createHopReasoner({
        analyzer: fixedAnalyzer(plan),
        retriever: overlapRetriever(news),
        reranker: keepOrder,
        config: { topK: 2, maxEvidenceChunks: 3, switchedOff },
      }).answer(ask('澜江大桥通车、雄鹰队对猛虎队的比赛和北湾港区启用，哪个最早？'), { emit: () => undefined });
      return trace;
    };
    const on = await evidence([]);
    expect(on.hops.map((hop) => hop.evidenceChunkIds[0])).toEqual(['bridge-1', 'eagles', 'bay-1']);
    // After the first citations, the match's best chunk, before any event's second report.
    expect(on.finalEvidenceChunkIds).toContain('eagles');
    expect((await evidence(['uncitedFoci'])).finalEvidenceChunkIds).not.toContain('eagles');
  });

  it("switches - unknownFusion off hands an UNKNOWN chain's evidence the last hop's ranking alone", async () => {
    // A hop-1 chunk the hop does not cite reaches the evidence only through the fused ranking.
    const poster = chunk('poster', 'Film posters', 'Posters of No Harbour were sold in 1936 to every star fan.');
    const withoutStar = [...corpus.filter((item) => item.chunkId !== 'star' && item.chunkId !== 'son'), poster];
    const evidence = async (switchedOff: ReasoningSwitch[]) => {
      const { done, trace } = await createHopReasoner({
        analyzer: fixedAnalyzer(),
        retriever: overlapRetriever(withoutStar),
        reranker: keepOrder,
        config: { topK: 4, switchedOff },
      }).answer(ask(), { emit: () => undefined });
      expect(done.stopReason).toBe(StopReason.UNKNOWN);
      return { final: trace.finalEvidenceChunkIds, hops: trace.hops.map((hop) => hop.evidenceChunkIds) };
    };
    // The whole question's own retrieval would bring the chunk back: measured apart, below.
    const fused = await evidence(['wholeQuestionFallback']);
    const alone = await evidence(['unknownFusion', 'wholeQuestionFallback']);
    expect(fused.hops[0]).toContain('poster');
    expect(fused.final).toContain('poster');
    expect(alone.final).not.toContain('poster');
  });

  it("switches - unplannedFusion off hands a chain past its planned hops the unplanned hop's ranking alone", async () => {
    // Read as one lookup, the question takes a hop the analysis did not plan (a bridge the wording
    // hid); a chunk only the planned hop ranks, and does not cite, reaches the evidence through the fusion.
    const question = 'No Harbour is a 1936 film starring an actress born in what year?';
    const poster = chunk('poster', 'Film posters', 'Posters of No Harbour, a 1936 film, were sold to every fan.');
    const born = chunk('born', 'Mirela Dunstan', 'Mirela Dunstan, an actress, was born in 1917 in Tenbury.');
    const namesake = chunk('namesake', 'Harbour Masters (1936 film)', 'Harbour Masters is a 1936 comedy film.');
    const chunks = [corpus[0] as (typeof corpus)[number], namesake, poster, born, ...corpus.slice(3)];
    const evidence = async (switchedOff: ReasoningSwitch[]) => {
      const { trace } = await createHopReasoner({
        analyzer: fixedAnalyzer(analysis({ route: Route.SINGLE, complexity: 1, signals: [] })),
        retriever: overlapRetriever(chunks),
        reranker: keepOrder,
        config: { topK: 3, maxEvidenceChunks: 5, switchedOff },
      }).answer(ask(question), { emit: () => undefined });
      expect(trace.hops.length).toBe(2);
      return { final: trace.finalEvidenceChunkIds, hops: trace.hops.map((hop) => hop.evidenceChunkIds) };
    };
    const fused = await evidence([]);
    const alone = await evidence(['unplannedFusion']);
    expect(fused.hops[0]).toContain('poster');
    expect(fused.hops[1]).not.toContain('poster');
    expect(fused.final).toContain('poster');
    expect(alone.final).not.toContain('poster');
  });

  it('switches - wholeQuestionFallback off leaves a chain that ends without an answer with its own evidence alone', async () => {
    // The question's own words find the poster; the chain's queries, sent for a missing star, do not keep it.
    const poster = chunk('poster', 'Film posters', 'Posters of No Harbour were sold in 1936 to every star fan.');
    const withoutStar = [...corpus.filter((item) => item.chunkId !== 'star' && item.chunkId !== 'son'), poster];
    const final = async (switchedOff: ReasoningSwitch[]) => {
      const retriever = overlapRetriever(withoutStar);
      const { trace } = await createHopReasoner({
        analyzer: fixedAnalyzer(),
        retriever,
        reranker: keepOrder,
        config: { topK: 4, switchedOff },
      }).answer(ask(), { emit: () => undefined });
      return { final: trace.finalEvidenceChunkIds, queries: retriever.calls.map((call) => call.query) };
    };
    const withFallback = await final(['unknownFusion']);
    const without = await final(['unknownFusion', 'wholeQuestionFallback']);
    // The first hop searches the question too; the fallback searches it once more, last.
    const asked = (queries: string[]) => queries.filter((query) => query === BRIDGE_QUESTION).length;
    expect(withFallback.queries.at(-1)).toBe(BRIDGE_QUESTION);
    expect(asked(withFallback.queries)).toBe(2);
    expect(withFallback.final).toContain('poster');
    expect(asked(without.queries)).toBe(1);
    expect(without.final).not.toContain('poster');
  });

  it('switches - timedEvents off leaves a question about when listed events happened unsplit', () => {
    const question = '青川大桥通车和澜沧博物馆举办展览是在同一个月吗？';
    expect(analyzeByRules(question).route).toBe(Route.PARALLEL);
    expect(analyzeByRules(question, ['timedEvents']).route).not.toBe(Route.PARALLEL);
  });

  it('switches - parentheticalTitles off reads "No Harbour (1936 film)" as a title like any other', () => {
    const film = chunk('film', 'No Harbour (1936 film)', 'No Harbour is a 1936 Velmarian mystery film.');
    expect(bareTitle(film.title, titleConventions([]))).toBe('No Harbour');
    expect(isAbout(film, 'No Harbour', titleConventions([]))).toBe(true);
    const off = titleConventions(['parentheticalTitles']);
    expect(bareTitle(film.title, off)).toBe('No Harbour (1936 film)');
    expect(isAbout(film, 'No Harbour', off)).toBe(false);
  });

  it('switches - commaTitles off no longer reads "Elm Park, Dunmore" as the document about Elm Park', () => {
    const park = chunk('park', 'Elm Park, Dunmore', 'Elm Park is the oldest city park in Dunmore.');
    expect(isAbout(park, 'Elm Park', titleConventions([]))).toBe(true);
    expect(isAbout(park, 'Elm Park', titleConventions(['commaTitles']))).toBe(false);
    // Its whole title still names it.
    expect(isAbout(park, 'Elm Park, Dunmore', titleConventions(['commaTitles']))).toBe(true);
  });
});
