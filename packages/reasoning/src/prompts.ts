import { randomBytes } from 'node:crypto';
import type { Chunk__Output } from '@hopline/contracts';
import { createPromptBook } from '@hopline/models';

/** The reasoning tasks that have a prompt file under `packages/reasoning/prompts/`. */
export type ReasoningPrompt = 'decompose' | 'hyde' | 'extract-hop' | 'synthesize';

export const prompts = createPromptBook<ReasoningPrompt>(new URL('../prompts/', import.meta.url));

export interface FencedEvidence {
  /** Goes into the prompt: every document between markers it cannot forge. */
  text: string;
  /** The marker's nonce, which the prompt names so the model knows where data starts and ends. */
  nonce: string;
}

/**
 * Retrieved text between markers that carry a random nonce: a document cannot close its own
 * fence, so instructions written inside it stay data.
 */
export function fenceEvidence(items: readonly { label: string; chunk: Chunk__Output }[]): FencedEvidence {
  const nonce = randomBytes(6).toString('hex');
  const text = items
    .map(({ label, chunk }) => {
      const body = chunk.text.replaceAll(nonce, '');
      return `<<<DOCUMENT ${nonce} ${label} title=${JSON.stringify(chunk.title)}>>>\n${body}\n<<<END ${nonce}>>>`;
    })
    .join('\n\n');
  return { text, nonce };
}
