import { z } from 'zod';
import { BudgetExhaustedError, type ChatModel, type ChatMessage } from '@hopline/models';
import { approximateTokens } from '@hopline/text';
import { createFence, fenceEvidence, prompts } from '../prompts.js';
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

/**
 * How the synthesis prompt asks a model to open an answer it declines to give: the answer is then
 * an abstention, whatever the chain (`declines`).
 */
const DECLINING_OPENINGS = ['I cannot answer', '无法回答'] as const;

/** Whether a model's answer opens as the synthesis prompt asks one it declines to give. */
export const declines = (answer: string): boolean => {
  const opening = answer.trimStart().toLowerCase();
  return DECLINING_OPENINGS.some((words) => opening.startsWith(words.toLowerCase()));
};

export interface ModelReasonerOptions {
  chat: ChatModel;
}

// The longest replies asked for (the question's token budget may leave less): an answer of at
// most five sentences with its citations, and one hop's finding as JSON. A reply that rambles
// past them is cut, not paid for to its end.
const ANSWER_TOKEN_CAP = 1_024;
const FINDING_TOKEN_CAP = 512;
// A reply shorter than this is no reply: a request does not start with less left.
const MIN_REPLY_TOKENS = 48;
// approximateTokens is an estimate; the server's tokenizer may count more.
const PROMPT_MARGIN = 1.2;

const label = (position: number) => `E${position + 1}`;

/**
 * A reply's max_tokens: what the question's token budget leaves after the prompt (prompt and
 * reply are both counted), at most `cap`. Too little left to write a reply is a spent budget.
 */
function replyTokens(task: string, messages: readonly ChatMessage[], tokensLeft: number, cap: number): number {
  const prompt = Math.ceil(approximateTokens(messages.map((message) => message.content).join('\n')) * PROMPT_MARGIN);
  const left = tokensLeft - prompt;
  if (left < MIN_REPLY_TOKENS)
    throw new BudgetExhaustedError(
      `the question has ${tokensLeft} tokens left, and the ${task} prompt takes about ${prompt} of them`,
    );
  return Math.floor(Math.min(left, cap));
}

/**
 * The reasoning port over a chat model: one prompt per task, retrieved text fenced as data,
 * temperature 0 for extraction. It only reports what the model said; the hop loop checks the
 * citations against the hop's evidence and falls back to the offline reasoner when it fails.
 */
export function createModelReasoner(options: ModelReasonerOptions): Reasoner {
  const { chat } = options;

  async function extractHopAnswer(input: HopExtractionInput, call: ModelCallContext): Promise<HopFinding> {
    const fence = createFence();
    const previous =
      input.previous.length === 0
        ? '(none: this is the first step)'
        : input.previous
            .map(
              (step, position) =>
                `${position + 1}. searched "${step.query}" → ${step.finding.unknown ? 'not found' : step.finding.answer}`,
            )
            .join('\n');
    // The chain's focus may be a model's sub-question, its searches and findings a model's words.
    const steps = fence.wrap(
      'DATA',
      'steps',
      `This chain answers: ${input.focus}\nFindings of earlier steps:\n${previous}\nThis step's search: ${input.query}`,
    );
    const messages = prompts.messages('extract-hop', {
      nonce: fence.nonce,
      question: input.question,
      steps,
      expectedHops: String(input.expectedHops),
      hop: String(input.hop),
      evidence: fenceEvidence(
        fence,
        input.chunks.map((chunk, position) => ({ label: label(position), chunk })),
      ),
    });
    const reply = await chat.complete({
      messages,
      json: hopReplySchema,
      temperature: 0,
      maxTokens: replyTokens('extraction', messages, call.usage.tokensLeft, FINDING_TOKEN_CAP),
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
      // Not done, with no search of its own: the next hop looks for what this one found.
      nextQuery: value.done || value.unknown ? '' : value.nextQuery.trim() || value.answer,
      confidence: value.confidence,
      citedChunkIds,
      bridgeEntities: value.unknown ? [] : bridgeEntities,
    };
  }

  async function* synthesize(input: SynthesisInput, call: ModelCallContext): AsyncGenerator<string> {
    const fence = createFence();
    const chain = fence.wrap(
      'DATA',
      'steps',
      input.hops
        .map(
          (hop) =>
            `step ${hop.hop} (${hop.focus}): searched "${hop.query}" → ${hop.finding.unknown ? 'not found' : hop.finding.answer}`,
        )
        .join('\n'),
    );
    const completeness = input.complete
      ? `The chain of evidence is complete: answer the question. Should the evidence not answer it after all, begin with "${DECLINING_OPENINGS[0]}" (for a question in Chinese, "${DECLINING_OPENINGS[1]}") and say what was found and what was not.`
      : `The chain of evidence is INCOMPLETE (${input.missing || 'a step found nothing'}): do not answer; say that you cannot, what the evidence did show (cited), and what was not found.`;
    const messages = prompts.messages('synthesize', {
      nonce: fence.nonce,
      completeness,
      question: input.question,
      chain,
      evidence: fenceEvidence(
        fence,
        input.evidence.map((item) => ({ label: `[${item.index}]`, chunk: item.chunk })),
      ),
    });
    yield* chat.stream({
      messages,
      temperature: 0,
      maxTokens: replyTokens('synthesis', messages, call.usage.tokensLeft, ANSWER_TOKEN_CAP),
      deadlineUnixMs: call.deadlineUnixMs,
      signal: call.signal,
      meter: call.usage,
    });
  }

  return { kind: 'model', extractHopAnswer, synthesize };
}
