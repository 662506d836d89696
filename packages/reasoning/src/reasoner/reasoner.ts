import type { Chunk__Output } from '@hopline/contracts';
import type { UsageMeter } from '@hopline/models';
import type { ReasoningSwitch } from '../switches.js';

/** What one hop concluded from its evidence. */
export interface HopFinding {
  /** The hop's answer: the bridge entity the next hop asks about, or the final answer. */
  answer: string;
  /** The evidence does not say: the chain stops here rather than guess a bridge. */
  unknown: boolean;
  /** The question is answered; no further hop is needed. */
  done: boolean;
  /** The next hop's query; empty when done or unknown. */
  nextQuery: string;
  /** 0..1. */
  confidence: number;
  /** Chunks of this hop's evidence that support the answer, strongest first. */
  citedChunkIds: string[];
  /**
   * The entities the next hop should find, best first (the answer is the first). A dependent
   * sub-question is filled in with them, and the next hop's evidence is read for them.
   */
  bridgeEntities: string[];
}

export interface PreviousHop {
  query: string;
  finding: HopFinding;
  cited: readonly Chunk__Output[];
}

export interface HopExtractionInput {
  /** The user's whole question. */
  question: string;
  /** What this chain answers: the question itself, or one sub-question of a plan. */
  focus: string;
  /** 1-based position in this chain. */
  hop: number;
  /** Hops the question's structure suggests this chain needs (from the analysis). */
  expectedHops: number;
  /** Hops this chain may still take after this one: 0 means this hop must conclude. */
  hopsLeft: number;
  query: string;
  /** This hop's evidence, best first. */
  chunks: readonly Chunk__Output[];
  /** Earlier hops of this chain, in order. */
  previous: readonly PreviousHop[];
}

/** One numbered entry of the evidence synthesis may cite as [index]. */
export interface EvidenceItem {
  index: number;
  chunk: Chunk__Output;
  /** The hop whose retrieval found the chunk. */
  hop: number;
  /** The entity whose answer led to that hop ('' for the first hop). */
  bridgeEntity: string;
}

export interface SynthesisHop {
  hop: number;
  /** The (sub-)question the hop's chain answers. */
  focus: string;
  query: string;
  finding: HopFinding;
}

export interface SynthesisInput {
  question: string;
  hops: readonly SynthesisHop[];
  evidence: readonly EvidenceItem[];
  /** False when the chain broke: the synthesis must abstain and say what was and was not found. */
  complete: boolean;
  /** What the broken chain was still looking for. */
  missing: string;
  /** The reasoning switches off for this question (`pnpm eval --ablate`); none in production. */
  switchedOff?: readonly ReasoningSwitch[];
}

export interface ModelCallContext {
  deadlineUnixMs: number;
  signal: AbortSignal;
  usage: UsageMeter;
}

/**
 * The reasoning port of the hop loop. Two adapters: the offline reasoner (rules and
 * extraction) and the chat-model reasoner (prompts to any OpenAI-compatible server).
 */
export interface Reasoner {
  readonly kind: 'offline' | 'model';
  extractHopAnswer(input: HopExtractionInput, call: ModelCallContext): Promise<HopFinding>;
  /** The answer's text as it is written; every claim cites evidence as [index]. */
  synthesize(input: SynthesisInput, call: ModelCallContext): AsyncIterable<string>;
}
