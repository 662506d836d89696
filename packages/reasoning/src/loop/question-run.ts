import type {
  Analysis__Output,
  Chunk__Output,
  HopRecord__Output,
  StageTimings__Output,
  StopReason__Output,
  ValidRequestContext,
} from '@hopline/contracts';
import { StopReason } from '@hopline/contracts';
import type { UsageMeter } from '@hopline/models';
import type { ModelCallContext, Reasoner } from '../reasoner/reasoner.js';
import { bareTitle, titleConventions } from '../offline/text.js';
import { sameEntity } from '../offline/question.js';
import type { Logger } from '@hopline/telemetry';
import type { EarlyRetrieval } from './early-retrieval.js';
import type { EventStream } from './events.js';
import type { AnalyzerPort, CallContext, Clock, RerankerPort, RetrieverPort } from './ports.js';
import type { HopReasonerSettings } from './settings.js';

export interface ReasonerDependencies {
  analyzer: AnalyzerPort;
  retriever: RetrieverPort;
  reranker: RerankerPort;
  /** The reasoner hops and synthesis ask first (the chat-model one when configured). */
  reasoner: Reasoner;
  /** Always offline: answers when the first reasoner fails or is not trusted. */
  fallback: Reasoner;
  clock: Clock;
  logger?: Pick<Logger, 'debug' | 'info' | 'warn'>;
}

/** Where a chunk entered the question: the hop that found it and the bridge that led there. */
export interface Provenance {
  hop: number;
  bridgeEntity: string;
}

/**
 * One question in flight: its request, limits, clock, events, spend, and what the hops have
 * recorded so far. Every stage of the loop reads and writes it; nothing outlives the question.
 */
export class QuestionRun {
  readonly hops: HopRecord__Output[] = [];
  readonly degradedReasons: string[] = [];
  readonly timings: StageTimings__Output = {
    analyzeMs: 0,
    retrieveMs: 0,
    rerankMs: 0,
    reasonMs: 0,
    synthesizeMs: 0,
    totalMs: 0,
  };
  private readonly foundIn = new Map<string, Provenance>();
  private readonly citedIn = new Map<string, Provenance>();
  private hopCounter = 0;

  constructor(
    readonly deps: ReasonerDependencies,
    readonly settings: HopReasonerSettings,
    readonly request: ValidRequestContext,
    readonly question: string,
    readonly maxHops: number,
    /** Aborts on the caller's cancel or at the question's deadline. */
    readonly signal: AbortSignal,
    /** The caller's own signal: its abort is a cancellation, not a deadline. */
    readonly callerSignal: AbortSignal,
    readonly usage: UsageMeter,
    readonly events: EventStream,
    readonly startedMs: number,
  ) {}

  analysis: Analysis__Output | undefined;
  /** The first hop's search, when it was started beside the analysis (`earlyFirstRetrieval`). */
  earlyRetrieval: EarlyRetrieval | undefined;

  get now(): number {
    return this.deps.clock.now();
  }

  nextHopNumber(): number {
    this.hopCounter += 1;
    return this.hopCounter;
  }

  get hopCount(): number {
    return this.hopCounter;
  }

  /** Why no further hop may start, or undefined when one may. Checked before every hop. */
  stopBeforeHop(deadlineUnixMs: number = this.request.deadlineUnixMs): StopReason__Output | undefined {
    if (this.callerSignal.aborted) return StopReason.CANCELLED;
    if (this.now >= Math.min(deadlineUnixMs, this.request.deadlineUnixMs)) return StopReason.DEADLINE;
    if (this.usage.exhausted) return StopReason.BUDGET;
    return undefined;
  }

  callContext(deadlineUnixMs: number = this.request.deadlineUnixMs, signal: AbortSignal = this.signal): CallContext {
    return { request: this.request, deadlineUnixMs: Math.min(deadlineUnixMs, this.request.deadlineUnixMs), signal };
  }

  modelCall(deadlineUnixMs: number = this.request.deadlineUnixMs, signal: AbortSignal = this.signal): ModelCallContext {
    return { deadlineUnixMs: Math.min(deadlineUnixMs, this.request.deadlineUnixMs), signal, usage: this.usage };
  }

  /** Whether an earlier hop of the question already retrieved the chunk. */
  seen(chunkId: string): boolean {
    return this.foundIn.has(chunkId);
  }

  /** Remembers where each chunk was first found. */
  noteFound(chunks: readonly Chunk__Output[], provenance: Provenance): void {
    for (const chunk of chunks) if (!this.foundIn.has(chunk.chunkId)) this.foundIn.set(chunk.chunkId, provenance);
  }

  /**
   * Remembers the hop whose answer cited each chunk, the hop a citation names: the first that
   * cited it, unless a later hop was sent for the entity the chunk is about — a bridge's own
   * document came into the chain through that bridge, even when an earlier hop cited it beside
   * its own evidence.
   */
  noteCited(chunks: readonly Chunk__Output[], provenance: Provenance): void {
    for (const chunk of chunks) {
      const current = this.citedIn.get(chunk.chunkId);
      const throughBridge =
        provenance.bridgeEntity !== '' &&
        current?.bridgeEntity !== provenance.bridgeEntity &&
        sameEntity(bareTitle(chunk.title, titleConventions(this.settings.switchedOff)), provenance.bridgeEntity);
      if (!current || throughBridge) this.citedIn.set(chunk.chunkId, provenance);
    }
  }

  /** The hop a chunk serves as evidence for, and the bridge that led there. */
  provenanceOf(chunkId: string): Provenance | undefined {
    return this.citedIn.get(chunkId) ?? this.foundIn.get(chunkId);
  }

  degrade(reason: string): void {
    this.degradedReasons.push(reason);
    this.deps.logger?.warn('answer degraded', { questionId: this.request.questionId, reason });
  }
}
