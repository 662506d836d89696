import type {
  Analysis__Output,
  AskCommand__Output,
  Chunk__Output,
  Citation__Output,
  Done__Output,
  OperatorControls__Output,
  ReasoningTrace__Output,
  StopReason__Output,
} from '@hopline/contracts';
import {
  DecidedBy,
  DEFAULT_OPERATOR_CONTROLS,
  HoplineError,
  requireRequestContext,
  Route,
  StopReason,
  toHoplineError,
  ValidationError,
} from '@hopline/contracts';
import type { ChatModel } from '@hopline/models';
import type { EvidenceItem, Reasoner, SynthesisHop } from '../reasoner/reasoner.js';
import { BudgetExhaustedError, IncompleteAnswerError, UsageMeter } from '@hopline/models';
import { createModelReasoner, declines } from '../reasoner/model-reasoner.js';
import { createOfflineReasoner } from '../offline/offline-reasoner.js';
import { offlineAbstains } from '../offline/synthesis.js';
import { abortable, deadlineScope, withDeadline } from '@hopline/resilience';
import { isOn } from '../switches.js';
import type { Logger } from '@hopline/telemetry';
import { instrument } from '@hopline/telemetry';
import type { WrittenAnswer } from './answer-writer.js';
import { writeAnswer } from './answer-writer.js';
import type { ChainResult } from './chain.js';
import { runChain } from './chain.js';
import type { EarlyRetrievalOutcome } from './early-retrieval.js';
import { EarlyRetrieval } from './early-retrieval.js';
import { EventStream } from './events.js';
import {
  bestStandsOut,
  fuseRankedLists,
  interleaveCitations,
  ownChunksFirst,
  selectEvidence,
  shareRankedLists,
  splitByOwnWords,
} from './evidence.js';
import type { HopOutcome } from './hop.js';
import { retrieveInput } from './hop.js';
import type { PlanResult } from './plan.js';
import { runPlan } from './plan.js';
import type { AnalyzerPort, Clock, EventSink, RerankerPort, RetrieverPort } from './ports.js';
import { systemClock } from './ports.js';
import { QuestionRun } from './question-run.js';
import type { HopReasonerConfig } from './settings.js';
import { hopsFor, resolveSettings } from './settings.js';

export interface HopReasonerDependencies {
  analyzer: AnalyzerPort;
  retriever: RetrieverPort;
  reranker: RerankerPort;
  /** An OpenAI-compatible chat model; without one the offline reasoner does all the reasoning. */
  chat?: ChatModel;
  logger?: Pick<Logger, 'debug' | 'info' | 'warn'>;
  config?: HopReasonerConfig;
  clock?: Clock;
  /** The operators' controls in force now, read once per question; without them, the defaults. */
  controls?: () => OperatorControls__Output;
  /** Told at a question's end what became of its early search (`earlyFirstRetrieval`), to count it. */
  onEarlyRetrieval?: (outcome: EarlyRetrievalOutcome) => void;
}

export interface AnswerOptions {
  /** Aborts when the asker is gone: no further hops, no further tokens. */
  signal?: AbortSignal;
  emit: EventSink;
}

export interface AnswerOutcome {
  done: Done__Output;
  /**
   * What to store for replaying the question: route, hops, evidence, stop reason, spend. Which
   * attempt at the question it was is the hop-reasoner's to say, where questions are retried.
   */
  trace: Omit<ReasoningTrace__Output, 'attempt'>;
}

export interface HopReasoner {
  answer(ask: AskCommand__Output, options: AnswerOptions): Promise<AnswerOutcome>;
}

/** What the route produced, in the shape evidence selection and synthesis need. */
interface Outcome {
  stopReason: StopReason__Output;
  complete: boolean;
  missing: string;
  hops: SynthesisHop[];
  keyEvidence: Chunk__Output[];
  ranked: Chunk__Output[];
}

// When the analyzer cannot answer, the question still gets the loop: one hop that may extend.
const fallbackAnalysis = (reason: string): Analysis__Output => ({
  route: Route.SINGLE,
  subQuestions: [],
  complexity: 1,
  signals: [],
  hydeText: '',
  decidedBy: DecidedBy.FALLBACK,
  fallbackReason: reason,
  llmCalls: 0,
  tokens: 0,
  controls: null,
});

/**
 * The route as the operators' controls allow it, with the controls it was routed under: with
 * multi-hop off, one retrieval of the question as asked, whatever the analysis saw in it.
 */
const underControls = (analysis: Analysis__Output, controls: OperatorControls__Output): Analysis__Output =>
  controls.multiHop
    ? { ...analysis, controls }
    : { ...analysis, route: Route.SINGLE, subQuestions: [], complexity: 1, controls };

function fromChain(chain: ChainResult, focus: string): Outcome {
  return {
    stopReason: chain.stopReason,
    complete: chain.complete,
    missing: chain.missing,
    hops: chain.hops.map((hop) => toSynthesisHop(hop, focus)),
    keyEvidence: interleaveCitations(chain.hops.map((hop) => hop.cited)),
    ranked: chain.lastRanked,
  };
}

/** How a plan's rankings become its evidence: each a mechanism that can be switched off. */
interface PlanEvidence {
  shareFoci: boolean;
  decidedFoci: boolean;
  ownWords: boolean;
  uncitedFoci: boolean;
}

/**
 * A plan's outcome; `shareFoci` gives each sub-question's ranking its own share of the evidence,
 * `decidedFoci` a smaller one to a sub-question whose best chunk stands out, `ownWords` keeps
 * the chunks that state none of their focus's own words until every focus's own chunks have had
 * their turns, and `uncitedFoci` lets a sub-question whose hops cited nothing take its turn among
 * the citations with its best-ranked chunk.
 */
function fromPlan(plan: PlanResult, { shareFoci, decidedFoci, ownWords, uncitedFoci }: PlanEvidence): Outcome {
  const rankings = plan.steps.map((step) => step.chain?.lastRanked ?? []);
  const decided = decidedFoci ? rankings.map(bestStandsOut) : [];
  const share = (lists: readonly (readonly Chunk__Output[])[]) =>
    shareFoci ? shareRankedLists(lists, decided) : fuseRankedLists(lists);
  const split = ownWords
    ? splitByOwnWords(
        rankings,
        plan.steps.map((step) => step.text),
      )
    : undefined;
  const hops = plan.steps.flatMap((step) => (step.chain?.hops ?? []).map((hop) => ({ hop, focus: step.text })));
  // The citations come first in the evidence, a turn per hop: a focus whose hops cited nothing
  // (its chunks state no answer its hop could read) would wait behind every other focus's
  // runners-up, though its own report may rank first in its list. Its best chunk follows the
  // first citations, before any second one: a cited chunk is one a hop read its answer from.
  const uncited = uncitedFoci
    ? plan.steps.flatMap((step, index) => {
        if ((step.chain?.hops ?? []).some((hop) => hop.cited.length > 0)) return [];
        const best = split?.[index]?.own[0] ?? rankings[index]?.[0];
        return best ? [[best]] : [];
      })
    : [];
  return {
    stopReason: plan.stopReason,
    complete: plan.complete,
    missing: plan.missing,
    hops: hops.map(({ hop, focus }) => toSynthesisHop(hop, focus)),
    keyEvidence: interleaveCitations([...hops.map(({ hop }) => hop.cited), ...uncited]),
    ranked: split ? ownChunksFirst(split, share) : share(rankings),
  };
}

const toSynthesisHop = (hop: HopOutcome, focus: string): SynthesisHop => ({
  hop: hop.hop,
  focus,
  query: hop.query,
  finding: hop.finding,
});

/**
 * The hop-reasoner's core, against ports: analyze → the loop (or the parallel plan) → final
 * evidence → grounded synthesis, streamed. Events go out in order: route, then per hop
 * hop_started, retrieval, hop_answer, then token…, citations, done. Returns the Done payload
 * and the reasoning trace to store.
 */
export function createHopReasoner(deps: HopReasonerDependencies): HopReasoner {
  const settings = resolveSettings(deps.config);
  const clock = deps.clock ?? systemClock;
  const fallback = createOfflineReasoner({ switchedOff: settings.switchedOff });
  const reasoner: Reasoner = deps.chat ? createModelReasoner({ chat: deps.chat }) : fallback;

  async function answer(ask: AskCommand__Output, options: AnswerOptions): Promise<AnswerOutcome> {
    const request = requireRequestContext(ask.ctx);
    const question = ask.question.trim();
    if (!question) throw new ValidationError('the question is empty');
    const callerSignal = options.signal ?? new AbortController().signal;
    const questionScope = deadlineScope(request.deadlineUnixMs, callerSignal);
    const controls = deps.controls?.() ?? DEFAULT_OPERATOR_CONTROLS;
    const run = new QuestionRun(
      {
        analyzer: deps.analyzer,
        retriever: deps.retriever,
        reranker: deps.reranker,
        reasoner,
        fallback,
        clock,
        ...(deps.logger ? { logger: deps.logger } : {}),
      },
      settings,
      request,
      question,
      Math.min(hopsFor(ask.maxHops, settings), controls.multiHop ? controls.hopCap : 1),
      questionScope.signal,
      callerSignal,
      new UsageMeter({ maxLlmCalls: settings.maxLlmCalls, maxTokens: settings.maxTokens }),
      new EventStream(request.questionId, options.emit, clock),
      clock.now(),
    );
    try {
      return await instrument(
        'answer question',
        {
          attributes: {
            'hopline.question_id': request.questionId,
            'hopline.controls.multi_hop': controls.multiHop,
            'hopline.controls.hop_cap': controls.hopCap,
          },
        },
        async (span) => {
          if (settings.earlyFirstRetrieval) run.earlyRetrieval = startEarlyRetrieval(run);
          const analysis = underControls(await analyze(run), controls);
          await run.events.send({ event: 'route', route: analysis });
          const outcome = await follow(run, analysis);
          const { done, evidence, citations } = await conclude(run, analysis, outcome);
          span.setAttributes({
            'hopline.route': analysis.route,
            'hopline.stop_reason': done.stopReason,
            'hopline.hops': done.hops,
          });
          await run.events.flush();
          return { done, trace: traceOf(run, analysis, done, evidence, citations) };
        },
      );
    } finally {
      questionScope.release();
      if (run.earlyRetrieval) deps.onEarlyRetrieval?.(run.earlyRetrieval.outcome);
    }
  }

  /** The search a chain's first hop makes of the question itself, started before the plan is known. */
  function startEarlyRetrieval(run: QuestionRun): EarlyRetrieval {
    const input = retrieveInput(
      run,
      { query: run.question, hydeText: '', hopInChain: 1, bridgeEntity: '', previous: [] },
      1,
    );
    return new EarlyRetrieval(input, deps.retriever.retrieve(input, run.callContext()));
  }

  async function analyze(run: QuestionRun): Promise<Analysis__Output> {
    const started = run.now;
    try {
      const analysis = await deps.analyzer.analyze(run.question, run.callContext());
      run.usage.include(analysis);
      // A plan or hypothetical answer the model could not give changes how the question is searched.
      if (analysis.fallbackReason !== '') run.degrade(`analysis by the model fell back: ${analysis.fallbackReason}`);
      return analysis;
    } catch (error) {
      const failure = toHoplineError(error);
      run.degrade(
        `analysis failed (${failure.code}: ${failure.message}); the question runs as one hop that may extend`,
      );
      return fallbackAnalysis(failure.message);
    } finally {
      run.timings.analyzeMs = run.now - started;
    }
  }

  async function follow(run: QuestionRun, analysis: Analysis__Output): Promise<Outcome> {
    return withWholeQuestion(run, await route(run, analysis));
  }

  /**
   * A loop or plan that ends without an answer gets one retrieval of the whole question, after
   * what it ranked: the evidence the abstention cites (and a writer may still use) then
   * includes what the question's own words find, where the hops' queries strayed.
   */
  async function withWholeQuestion(run: QuestionRun, outcome: Outcome): Promise<Outcome> {
    const stop = run.stopBeforeHop();
    if (outcome.complete || stop === StopReason.CANCELLED || stop === StopReason.DEADLINE) return outcome;
    if (!isOn(settings.switchedOff, 'wholeQuestionFallback')) return outcome;
    // Bounded like a plan's layer, so that a slow search still leaves time to write the answer.
    const left = Math.max(0, run.request.deadlineUnixMs - run.now);
    const deadline = run.now + Math.floor(left * settings.layerDeadlineShare);
    try {
      const retrieved = await withDeadline(deadline, run.signal, (signal) =>
        abortable(
          deps.retriever.retrieve(
            // The question's own words only: no hop's answers to seed the entity graph with.
            { query: run.question, hydeText: '', topK: settings.topK, hop: run.hopCount, seeds: [] },
            run.callContext(deadline, signal),
          ),
          signal,
        ),
      );
      run.noteFound(retrieved.chunks, { hop: run.hopCount, bridgeEntity: '' });
      // After the chain's own ranking, not interleaved with it: the evidence around the last
      // confirmed link keeps its place, and the question's own finds fill what is left.
      const ranked = new Set(outcome.ranked.map((chunk) => chunk.chunkId));
      return {
        ...outcome,
        ranked: [...outcome.ranked, ...retrieved.chunks.filter((chunk) => !ranked.has(chunk.chunkId))],
      };
    } catch (error) {
      if (run.callerSignal.aborted) return outcome;
      run.degrade(`the whole-question fallback retrieval failed: ${toHoplineError(error).message}`);
      return outcome;
    }
  }

  async function route(run: QuestionRun, analysis: Analysis__Output): Promise<Outcome> {
    if (analysis.route === Route.PARALLEL && analysis.subQuestions.length > 0) {
      const plan = await runPlan(run, analysis.subQuestions, analysis.hydeText);
      return fromPlan(plan, {
        shareFoci: isOn(settings.switchedOff, 'focusShares'),
        decidedFoci: isOn(settings.switchedOff, 'decidedFoci'),
        ownWords: isOn(settings.switchedOff, 'ownFocusWords'),
        uncitedFoci: isOn(settings.switchedOff, 'uncitedFoci'),
      });
    }
    const first = analysis.subQuestions[0]?.text ?? run.question;
    // The analysis's complexity is the hops the question's shape suggests; the loop may not exceed its limit.
    const expectedHops =
      analysis.route === Route.ITERATIVE ? Math.min(Math.max(2, analysis.complexity), run.maxHops) : 1;
    const chain = await runChain(run, {
      focus: run.question,
      firstQuery: first,
      expectedHops,
      maxHops: run.maxHops,
      hydeText: analysis.hydeText,
    });
    return fromChain(chain, run.question);
  }

  async function conclude(run: QuestionRun, analysis: Analysis__Output, outcome: Outcome) {
    const evidenceChunks = selectEvidence(outcome.keyEvidence, outcome.ranked, run.question, {
      maxChunks: settings.maxEvidenceChunks,
      tokenBudget: settings.evidenceTokenBudget,
    });
    const evidence: EvidenceItem[] = evidenceChunks.map((chunk, position) => {
      const found = run.provenanceOf(chunk.chunkId);
      return { index: position + 1, chunk, hop: found?.hop ?? chunk.hop, bridgeEntity: found?.bridgeEntity ?? '' };
    });

    const complete = outcome.complete && evidence.length > 0;
    let text = '';
    let cited: number[] = [];
    let cut: StopReason__Output | undefined;
    let writerAbstained = false;
    if (!run.callerSignal.aborted) {
      const started = run.now;
      const written = await instrument(
        'synthesis',
        { attributes: { 'hopline.evidence': evidence.length, 'hopline.complete': complete } },
        async (span) => {
          const answer = await synthesize(run, {
            question: run.question,
            hops: outcome.hops,
            evidence,
            complete,
            missing: outcome.missing,
            switchedOff: settings.switchedOff,
          });
          span.setAttribute('hopline.cited', answer.cited.length);
          return answer;
        },
      );
      run.timings.synthesizeMs = run.now - started;
      text = written.text;
      cited = written.cited;
      cut = written.cut;
      writerAbstained = written.abstained === true;
    }
    // An asker gone during synthesis gets no more: its question ends CANCELLED whatever the loop found.
    const cancelled = run.callerSignal.aborted;
    const citations = cited.map((index) => citationOf(evidence[index - 1] as EvidenceItem));
    if (!cancelled) await run.events.send({ event: 'citations', citations: { citations } });

    run.timings.totalMs = run.now - run.startedMs;
    const done: Done__Output = {
      answer: text,
      citations,
      stopReason: cancelled ? StopReason.CANCELLED : (cut ?? outcome.stopReason),
      hops: run.hopCount,
      timings: { ...run.timings },
      route: analysis.route,
      // A complete chain whose writer still could not answer from it (or whose every sentence
      // failed the citation check) is an abstention too.
      abstained: !cancelled && (!complete || writerAbstained || text.trim() === ''),
      degraded: run.degradedReasons.length > 0,
      degradedReasons: [...run.degradedReasons],
      llmCalls: run.usage.llmCalls,
      tokens: run.usage.tokens,
      cached: false,
    };
    await run.events.send({ event: 'done', done });
    return { done, evidence, citations };
  }

  /**
   * The configured reasoner writes the answer; when it cannot start (failed, out of budget,
   * past the deadline) the offline reasoner writes it instead. Either way every sentence passes
   * the citation check (every [n] real, every claim, cited or not, stated by the chunks it
   * cites, nothing said twice) before it is sent as a token event. A model answer that broke
   * off after its first sentences were sent stays what it is, the start of an answer: `cut` is
   * the stop reason that says so (DEADLINE, BUDGET at max_tokens, INCOMPLETE otherwise).
   */
  async function synthesize(
    run: QuestionRun,
    input: Parameters<Reasoner['synthesize']>[0],
  ): Promise<{ text: string; cited: number[]; cut?: StopReason__Output; abstained?: boolean }> {
    const evidence = new Map(input.evidence.map((item) => [item.index, item.chunk]));
    const send = (text: string) => run.events.send({ event: 'token', token: { text } });
    if (reasoner !== fallback && run.usage.exhausted) {
      run.degrade('the question spent its LLM budget before synthesis; the offline reasoner answered');
    } else if (reasoner !== fallback && run.now < run.request.deadlineUnixMs) {
      const written = await writeAnswer(reasoner.synthesize(input, run.modelCall()), evidence, send, {
        signal: run.signal,
      });
      if (written.rejected.length > 0) {
        run.degrade(
          `synthesis cited [${written.rejected.join('], [')}], which name no evidence; ${written.droppedSentences} sentence(s) dropped`,
        );
      }
      noteUnsupported(run, 'the model', written);
      const failure = written.interruption;
      if (failure === undefined) {
        if (written.text.trim() !== '') return { ...written, abstained: declines(written.text) };
        run.degrade('the model wrote no answer that survived the citation check; the offline reasoner answered');
      } else {
        // What was sent stays the answer the trace and `done` record, though the asker left.
        if (run.callerSignal.aborted) return { text: written.text, cited: written.cited };
        if (written.text !== '') {
          run.degrade(`the answer was cut (${failure.code}: ${failure.message}); what was sent is only its start`);
          return { text: written.text, cited: written.cited, cut: cutReason(run, failure) };
        }
        const why = failure instanceof BudgetExhaustedError ? 'the question spent its LLM budget' : 'it failed';
        run.degrade(
          `synthesis by the model did not start or broke off before its first sentence: ${why} (${failure.code}: ${failure.message}); the offline reasoner answered`,
        );
      }
    }
    const written = await writeAnswer(fallback.synthesize(input, run.modelCall()), evidence, send, {
      uncited: 'trusted',
      // Past the deadline too, the offline answer is written (it takes no model call): only an asker gone stops it.
      signal: run.callerSignal,
    });
    noteUnsupported(run, 'the offline reasoner', written);
    return { ...written, abstained: offlineAbstains(input) };
  }

  return { answer };
}

/** Why a model answer stopped before it finished, as the stop reason the client sees. */
function cutReason(run: QuestionRun, failure: Error): StopReason__Output {
  if (
    run.now >= run.request.deadlineUnixMs ||
    (failure instanceof HoplineError && failure.code === 'deadline_exceeded')
  )
    return StopReason.DEADLINE;
  if (failure instanceof IncompleteAnswerError && failure.reason === 'length') return StopReason.BUDGET;
  return StopReason.INCOMPLETE;
}

/** A synthesis whose claims the evidence did not state is flagged: the reader got less than was written. */
function noteUnsupported(run: QuestionRun, writer: string, written: WrittenAnswer): void {
  if (written.unsupportedSentences > 0) {
    run.degrade(
      `${writer} wrote ${written.unsupportedSentences} sentence(s) whose claims no evidence states; they were not sent`,
    );
  }
}

function citationOf(item: EvidenceItem): Citation__Output {
  const { chunk } = item;
  return {
    index: item.index,
    chunkId: chunk.chunkId,
    docId: chunk.docId,
    kbId: chunk.kbId,
    title: chunk.title,
    span: chunk.span,
    snippet: chunk.text.length > 280 ? `${chunk.text.slice(0, 277)}...` : chunk.text,
    hop: item.hop,
    bridgeEntity: item.bridgeEntity,
    docVersion: chunk.docVersion,
    // With the page or section the chunk came from ("manual.pdf#page=3").
    ...(chunk.sourceUri ? { sourceUri: chunk.sourceUri } : {}),
  };
}

function traceOf(
  run: QuestionRun,
  analysis: Analysis__Output,
  done: Done__Output,
  evidence: readonly EvidenceItem[],
  citations: Citation__Output[],
): AnswerOutcome['trace'] {
  return {
    questionId: run.request.questionId,
    scope: run.request.scope,
    question: run.question,
    analysis,
    hops: run.hops,
    stopReason: done.stopReason,
    timings: done.timings,
    llmCalls: done.llmCalls,
    tokens: done.tokens,
    finalEvidenceChunkIds: evidence.map((item) => item.chunk.chunkId),
    createdUnixMs: run.startedMs,
    citations,
    answer: done.answer,
    abstained: done.abstained,
    degradedReasons: done.degradedReasons,
  };
}
