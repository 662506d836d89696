import { ValidationError } from '@hopline/contracts';
import { z } from 'zod';
import { REASONING_SWITCH_NAMES } from '../switches.js';

/** No question loops longer than this, whatever it or the configuration asks for. */
export const HARD_MAX_HOPS = 5;

const settingsSchema = z.object({
  /** Hops a question may take when its ask names none (an ask may ask for fewer or more, up to 5). */
  maxHops: z.number().int().min(1).max(HARD_MAX_HOPS).default(3),
  /** Chunks a hop keeps after reranking. */
  topK: z.number().int().min(1).max(100).default(10),
  /** The first hop retrieves this many times top-k: it has the least to go on. */
  firstHopFactor: z.number().min(1).max(5).default(1.5),
  /** LLM requests and tokens a question may spend. */
  maxLlmCalls: z.number().int().min(0).default(12),
  maxTokens: z.number().int().min(0).default(20_000),
  /** The final evidence handed to synthesis: at most this many chunks and (approximate) tokens. */
  maxEvidenceChunks: z.number().int().min(1).default(12),
  evidenceTokenBudget: z.number().int().min(100).default(4_000),
  /**
   * A hop that reaches the hops the question's shape asks for with an answer this confident ends
   * the chain, whatever the reasoner says of going on: a confident answer to the whole chain is enough.
   */
  stopConfidence: z.number().min(0).max(1).default(0.7),
  /** Share of the time left that one parallel layer may use, so a slow branch leaves time to answer. */
  layerDeadlineShare: z.number().gt(0).max(1).default(0.7),
  /**
   * Start the first hop's search of the question itself beside the analysis, where the analysis
   * is a round trip of its own (query-understanding over gRPC): the chain's first hop takes it when
   * it asks just that, and a plan that splits or rewrites the question leaves it (one search spent).
   */
  earlyFirstRetrieval: z.boolean().default(false),
  /** Rules and mechanisms switched off, to measure what each earns (see switches.ts); none in production. */
  switchedOff: z.array(z.enum(REASONING_SWITCH_NAMES)).default([]),
});

export type HopReasonerSettings = z.infer<typeof settingsSchema>;
export type HopReasonerConfig = z.input<typeof settingsSchema>;

export function resolveSettings(config: HopReasonerConfig = {}): HopReasonerSettings {
  const parsed = settingsSchema.safeParse(config);
  if (!parsed.success) {
    throw new ValidationError(
      `hop-reasoner settings: ${parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ')}`,
    );
  }
  return parsed.data;
}

/** The hops one question may take: its ask's number when it names one, within 1..HARD_MAX_HOPS. */
export function hopsFor(askedMaxHops: number, settings: HopReasonerSettings): number {
  const wanted = askedMaxHops > 0 ? askedMaxHops : settings.maxHops;
  return Math.min(HARD_MAX_HOPS, Math.max(1, Math.floor(wanted)));
}
