import { z } from 'zod';
import type { ChatModel } from '@hopline/models';
import { fenceEvidence, prompts } from '../prompts.js';
import type { HopExtractionInput, HopFinding, ModelCallContext, Reasoner, SynthesisInput } from './reasoner.js';

const hopReplySchema = z.object({
  answer: z.string(),
  unknown: z.boolean(),
  done: z.boolean(),
  nextQuery: z.string().default(''),
  confidence: z.number().min(0).max(1),
  cited: z.array(z.string()),
  bridgeEntities: z.array(z.string()).default([]),
});

export interface ModelReasonerOptions {
  chat: ChatModel;
  /** Longest answer synthesis may write. */
  maxAnswerTokens?: number;
}

const label = (position: number) => `E${position + 1}`;

/**
 * The reasoning port over a chat model: one prompt per task, retrieved text fenced as data,
 * temperature 0 for extraction. It only reports what the model said; the hop loop checks the
 * citations against the hop's evidence and falls back to the offline reasoner when it fails.
 */
export function createModelReasoner(options: ModelReasonerOptions): Reasoner {
  const { chat } = options;

  async function extractHopAnswer(input: HopExtractionInput, call: ModelCallContext): Promise<HopFinding> {
    const fenced = fenceEvidence(input.chunks.map((chunk, position) => ({ label: label(position), chunk })));
    const previous =
      input.previous.length === 0
        ? '(none: this is the first step)'
        : input.previous
            .map(
              (step, position) =>
                `${position + 1}. searched "${step.query}" → ${step.finding.unknown ? 'not found' : step.finding.answer}`,
            )
            .join('\n');
    const reply = await chat.complete({
      messages: prompts.messages('extract-hop', {
        nonce: fenced.nonce,
        question: input.question,
        focus: input.focus,
        previous,
        query: input.query,
        expectedHops: String(input.expectedHops),
        hop: String(input.hop),
        hopsLeft: String(input.hopsLeft),
        evidence: fenced.text,
      }),
      json: hopReplySchema,
      temperature: 0,
      deadlineUnixMs: call.deadlineUnixMs,
      signal: call.signal,
      meter: call.usage,
    });
    const value = reply.value;
    // Labels map back to chunk ids; a label the prompt never showed stays as written, so the
    // loop's citation check sees a chunk that is not in the hop's evidence and rejects it.
    const citedChunkIds = value.cited.map((cited) => {
      const position = /^E(\d+)$/i.exec(cited.trim())?.[1];
      const chunk = position === undefined ? undefined : input.chunks[Number(position) - 1];
      return chunk?.chunkId ?? cited;
    });
    const bridgeEntities = value.bridgeEntities.length > 0 ? value.bridgeEntities : value.answer ? [value.answer] : [];
    return {
      answer: value.unknown ? '' : value.answer,
      unknown: value.unknown,
      done: value.done,
      nextQuery: value.done || value.unknown ? '' : value.nextQuery,
      confidence: value.confidence,
      citedChunkIds,
      bridgeEntities: value.unknown ? [] : bridgeEntities,
    };
  }

  async function* synthesize(input: SynthesisInput, call: ModelCallContext): AsyncGenerator<string> {
    const fenced = fenceEvidence(input.evidence.map((item) => ({ label: `[${item.index}]`, chunk: item.chunk })));
    const chain = input.hops
      .map(
        (hop) =>
          `step ${hop.hop} (${hop.focus}): searched "${hop.query}" → ${hop.finding.unknown ? 'not found' : hop.finding.answer}`,
      )
      .join('\n');
    const completeness = input.complete
      ? 'The chain of evidence is complete: answer the question.'
      : `The chain of evidence is INCOMPLETE (${input.missing || 'a step found nothing'}): do not answer; say that you cannot, what the evidence did show (cited), and what was not found.`;
    yield* chat.stream({
      messages: prompts.messages('synthesize', {
        nonce: fenced.nonce,
        completeness,
        question: input.question,
        chain,
        evidence: fenced.text,
      }),
      temperature: 0,
      ...(options.maxAnswerTokens === undefined ? {} : { maxTokens: options.maxAnswerTokens }),
      deadlineUnixMs: call.deadlineUnixMs,
      signal: call.signal,
      meter: call.usage,
    });
  }

  return { kind: 'model', extractHopAnswer, synthesize };
}
