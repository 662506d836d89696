import type { Chunk__Output, Grade__Output, StopReason__Output } from '@hopline/contracts';
import { clipToChars, isHoplineError, RETRIEVE_QUERY_MAX_CHARS, StopReason, toHoplineError } from '@hopline/contracts';
import type { HopExtractionInput, HopFinding, PreviousHop } from '../reasoner/reasoner.js';
import { BudgetExhaustedError } from '@hopline/models';
import { claimOf, isEmptyClaim, isJudgement, supports } from '../offline/claims.js';
import { gradeEvidence } from '../offline/grade.js';
import { abortable } from '@hopline/resilience';
import { instrument } from '@hopline/telemetry';
import type { RetrieveInput } from './ports.js';
import type { QuestionRun } from './question-run.js';
import { isOn } from '../switches.js';

/** A hop could not finish because the question itself is over: cancelled, or out of time. */
export class QuestionInterrupted extends Error {
  constructor(readonly stopReason: StopReason__Output) {
    super(`question interrupted: ${stopReason}`);
  }
}

export interface HopStep {
  /** The (sub-)question this chain answers. */
  focus: string;
  query: string;
  /** 1-based position in its chain. */
  hopInChain: number;
  expectedHops: number;
  /** Hops the chain may still take after this one. */
  hopsLeft: number;
  previous: readonly PreviousHop[];
  hydeText: string;
  /** The entity whose answer led to this hop ('' for a chain's first hop). */
  bridgeEntity: string;
  /** This hop's deadline: the question's, or its parallel layer's. */
  deadlineUnixMs: number;
  signal: AbortSignal;
}

export interface HopOutcome {
  hop: number;
  query: string;
  ranked: Chunk__Output[];
  cited: Chunk__Output[];
  finding: HopFinding;
  grade: Grade__Output;
  /** Ranked chunks no earlier hop of the question had seen. */
  newChunks: number;
}

/** Cancelled or past the question's deadline: the failure ends the question, not just the hop. */
function interruption(run: QuestionRun, error: unknown): StopReason__Output | undefined {
  if (run.callerSignal.aborted) return StopReason.CANCELLED;
  if (run.now >= run.request.deadlineUnixMs) return StopReason.DEADLINE;
  if (isHoplineError(error) && error.code === 'cancelled' && run.signal.aborted) return StopReason.CANCELLED;
  return undefined;
}

function describe(error: unknown): string {
  const failure = toHoplineError(error);
  return `${failure.code}: ${failure.message}`;
}

async function timed<T>(add: (ms: number) => void, now: () => number, work: () => Promise<T>): Promise<T> {
  const started = now();
  try {
    return await work();
  } finally {
    add(now() - started);
  }
}

/**
 * One hop, as the loop in ARCHITECTURE.md writes it: retrieve (1.5 × top-k on a chain's first
 * hop), rerank (fused order when the reranker fails), grade, extract the hop answer — from the
 * configured reasoner, or the offline one when it fails or cites chunks outside this hop's
 * evidence — with hop_started, retrieval and hop_answer events.
 */
export async function runHop(run: QuestionRun, step: HopStep): Promise<HopOutcome> {
  const hop = run.nextHopNumber();
  const { deps } = run;
  const ctx = run.callContext(step.deadlineUnixMs, step.signal);
  const now = () => run.now;
  const attributes = { 'hopline.hop': hop, 'hopline.hop_in_chain': step.hopInChain };
  return instrument(
    'hop',
    { attributes, acceptableErrors: (error) => error instanceof QuestionInterrupted },
    async (span) => {
      await run.events.send({
        event: 'hopStarted',
        hopStarted: { hop, maxHops: run.maxHops, subQuestion: step.query },
      });

      const asked = retrieveInput(run, step, hop);
      const { topK } = asked;
      let retrieveMs = 0;
      const retrieved = await timed(
        (ms) => (retrieveMs = ms),
        now,
        async () => {
          try {
            // A port that ignores its signal still cannot hold the hop past it.
            const early = run.earlyRetrieval?.take(asked);
            return await abortable(early ?? deps.retriever.retrieve(asked, ctx), ctx.signal);
          } catch (error) {
            const stop = interruption(run, error);
            if (stop) throw new QuestionInterrupted(stop);
            return { chunks: [], degraded: true, degradedReasons: [`retrieval failed: ${describe(error)}`] };
          }
        },
      );
      run.timings.retrieveMs += retrieveMs;
      for (const reason of retrieved.degradedReasons) run.degrade(`hop ${hop}: ${reason}`);

      let rerankMs = 0;
      let rerankFallback = false;
      const ranked = await timed(
        (ms) => (rerankMs = ms),
        now,
        async () => {
          if (retrieved.chunks.length === 0) return [];
          try {
            const reranked = await abortable(
              deps.reranker.rerank({ query: step.query, chunks: retrieved.chunks, topN: topK }, ctx),
              ctx.signal,
            );
            rerankFallback = reranked.fallback;
            if (reranked.fallback)
              run.degrade(`hop ${hop}: reranker fell back: ${reranked.fallbackReason ?? 'no reason given'}`);
            return reranked.chunks;
          } catch (error) {
            const stop = interruption(run, error);
            if (stop) throw new QuestionInterrupted(stop);
            rerankFallback = true;
            run.degrade(`hop ${hop}: reranker failed (${describe(error)}); the fused retrieval order stands`);
            return retrieved.chunks.slice(0, topK);
          }
        },
      );
      run.timings.rerankMs += rerankMs;

      const grade = gradeEvidence(step.query, ranked);
      const newChunks = ranked.filter((chunk) => !run.seen(chunk.chunkId)).length;
      run.noteFound(ranked, { hop, bridgeEntity: step.bridgeEntity });
      await run.events.send({
        event: 'retrieval',
        retrieval: {
          hop,
          hits: ranked.length,
          chunkIds: ranked.map((chunk) => chunk.chunkId),
          grade,
          degraded: retrieved.degraded,
          degradedReasons: retrieved.degradedReasons,
          rerankFallback,
        },
      });

      let reasonMs = 0;
      const input: HopExtractionInput = {
        question: run.question,
        focus: step.focus,
        hop: step.hopInChain,
        expectedHops: step.expectedHops,
        hopsLeft: step.hopsLeft,
        query: step.query,
        chunks: ranked,
        previous: step.previous,
      };
      const finding = await timed(
        (ms) => (reasonMs = ms),
        now,
        () =>
          instrument(
            'extract hop answer',
            {
              attributes: { 'hopline.hop': hop, 'hopline.evidence': ranked.length },
              acceptableErrors: (error) => error instanceof QuestionInterrupted,
            },
            () => extract(run, input, hop, step),
          ),
      );
      run.timings.reasonMs += reasonMs;

      const byId = new Map(ranked.map((chunk) => [chunk.chunkId, chunk]));
      const cited = finding.citedChunkIds
        .map((id) => byId.get(id))
        .filter((chunk): chunk is Chunk__Output => chunk !== undefined);
      run.noteCited(cited, { hop, bridgeEntity: step.bridgeEntity });
      const hopAnswer = { hop, query: step.query, ...pickAnswer(finding), grade };
      await run.events.send({ event: 'hopAnswer', hopAnswer });
      run.hops.push({
        hop,
        query: step.query,
        evidenceChunkIds: ranked.map((chunk) => chunk.chunkId),
        answer: hopAnswer,
        retrieveMs,
        rerankMs,
        reasonMs,
        degraded: retrieved.degraded || rerankFallback,
      });
      span.setAttributes({
        'hopline.hits': ranked.length,
        'hopline.grade': grade,
        'hopline.unknown': finding.unknown,
        'hopline.done': finding.done,
        'hopline.degraded': retrieved.degraded || rerankFallback,
      });
      const hopReasons = run.degradedReasons.filter((reason) => reason.startsWith(`hop ${hop}: `));
      if (hopReasons.length > 0) span.setAttribute('hopline.degraded_reasons', hopReasons);
      return { hop, query: step.query, ranked, cited, finding, grade, newChunks };
    },
  );
}

/** What a hop asks retrieval for: its query, 1.5 × top-k on a chain's first hop, the graph's seeds. */
export function retrieveInput(
  run: QuestionRun,
  step: Pick<HopStep, 'query' | 'hydeText' | 'hopInChain' | 'bridgeEntity' | 'previous'>,
  hop: number,
): RetrieveInput {
  const { settings } = run;
  const topK = step.hopInChain === 1 ? Math.ceil(settings.topK * settings.firstHopFactor) : settings.topK;
  // A next query the model wrote may run past what a worker accepts; its head still searches.
  const query = clipToChars(step.query, RETRIEVE_QUERY_MAX_CHARS);
  return { query, hydeText: step.hydeText, topK, hop, seeds: graphSeeds(run, step) };
}

/**
 * What the hop knows to seed the entity graph beside the indexes with: its query, the entity
 * that led to it and the answers of the hops before it. Retrieval fuses the chunks the graph
 * links to them with its own hits; none when the `entityGraph` switch is off.
 */
function graphSeeds(run: QuestionRun, step: Pick<HopStep, 'query' | 'bridgeEntity' | 'previous'>): string[] {
  if (!isOn(run.settings.switchedOff, 'entityGraph')) return [];
  // Held to the query's bound, as the worker holds them: a model's answer may run long.
  return [step.query, step.bridgeEntity, ...step.previous.map((previous) => previous.finding.answer)]
    .filter((seed) => seed.trim() !== '')
    .map((seed) => clipToChars(seed, RETRIEVE_QUERY_MAX_CHARS));
}

const pickAnswer = (finding: HopFinding) => ({
  answer: finding.answer,
  unknown: finding.unknown,
  done: finding.done,
  nextQuery: finding.nextQuery,
  confidence: finding.confidence,
  citedChunkIds: finding.citedChunkIds,
});

/**
 * The configured reasoner's finding, checked: its citations must name chunks of this hop's
 * evidence, and those chunks must state its answer (by the citation check's claim rules). A
 * failure, a citation from elsewhere, an answer that claims nothing ("no answer" without
 * `unknown`) or one its citations do not state hands the hop to the offline reasoner; bridge
 * entities its citations do not state are dropped. So nothing unstated drives the next hop.
 */
async function extract(run: QuestionRun, input: HopExtractionInput, hop: number, step: HopStep): Promise<HopFinding> {
  const { reasoner, fallback } = run.deps;
  const offline = () => fallback.extractHopAnswer(input, run.modelCall(step.deadlineUnixMs, step.signal));
  if (reasoner === fallback) return offline();
  let finding: HopFinding;
  try {
    finding = await reasoner.extractHopAnswer(input, run.modelCall(step.deadlineUnixMs, step.signal));
  } catch (error) {
    if (run.callerSignal.aborted) throw new QuestionInterrupted(StopReason.CANCELLED);
    const why =
      error instanceof BudgetExhaustedError
        ? 'the question has spent its LLM budget'
        : `the model failed (${describe(error)})`;
    run.degrade(`hop ${hop}: ${why}; the offline reasoner answered`);
    return offline();
  }
  const evidence = new Set(input.chunks.map((chunk) => chunk.chunkId));
  const outside = finding.citedChunkIds.filter((id) => !evidence.has(id));
  if (outside.length > 0 || (!finding.unknown && finding.citedChunkIds.length === 0)) {
    const why =
      outside.length > 0
        ? `cited ${outside.join(', ')}, which this hop did not retrieve`
        : 'gave an answer without citing evidence';
    run.degrade(`hop ${hop}: the model ${why}; its answer was rejected and the offline reasoner answered`);
    return offline();
  }
  const cited = input.chunks.filter((chunk) => finding.citedChunkIds.includes(chunk.chunkId));
  if (!finding.unknown && isJudgement(finding.answer)) {
    // "Yes" or "no" states nothing a chunk could: its citations must at least be about what the
    // chain asks, and only names they state go on as bridges.
    if (!concerns(cited, input.focus)) {
      run.degrade(
        `hop ${hop}: the model judged "${finding.answer}" citing ${finding.citedChunkIds.join(', ')}, which say nothing of "${input.focus}"; its answer was rejected and the offline reasoner answered`,
      );
      return offline();
    }
    return { ...finding, bridgeEntities: statedBridges(finding, cited) };
  }
  // An empty claim is stated by any chunk: an answer with nothing to check is no answer.
  if (!finding.unknown && isEmptyClaim(claimOf(finding.answer))) {
    run.degrade(
      `hop ${hop}: the model's answer "${finding.answer}" states nothing the evidence could confirm; its answer was rejected and the offline reasoner answered`,
    );
    return offline();
  }
  if (!finding.unknown && !supports(cited, claimOf(finding.answer))) {
    run.degrade(
      `hop ${hop}: the model's answer "${finding.answer}" is not stated by ${finding.citedChunkIds.join(', ')}, which it cited; its answer was rejected and the offline reasoner answered`,
    );
    return offline();
  }
  if (finding.unknown) return { ...finding, bridgeEntities: [] };
  return { ...finding, bridgeEntities: [finding.answer, ...statedBridges(finding, cited)] };
}

/** Whether cited chunks are about what a question asks: they state one of its names, or with none, most of its words. */
function concerns(cited: readonly Chunk__Output[], asked: string): boolean {
  const claim = claimOf(asked);
  if (claim.phrases.length === 0) return claim.terms.length > 0 && supports(cited, claim);
  return claim.phrases.some((phrase) => supports(cited, { phrases: [phrase], terms: [] }));
}

/** The finding's bridge entities that its cited chunks state, other than its answer. */
const statedBridges = (finding: HopFinding, cited: readonly Chunk__Output[]) =>
  finding.bridgeEntities.filter((entity) => entity !== finding.answer && supports(cited, claimOf(entity)));
