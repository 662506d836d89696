import { randomBytes } from 'node:crypto';
import type { Chunk__Output } from '@hopline/contracts';
import { createPromptBook } from '@hopline/models';

/** The reasoning tasks that have a prompt file under `packages/reasoning/prompts/`. */
export type ReasoningPrompt = 'decompose' | 'hyde' | 'extract-hop' | 'synthesize';

export const prompts = createPromptBook<ReasoningPrompt>(new URL('../prompts/', import.meta.url));

/**
 * Markers that carry a random nonce, one per prompt: text between them is data, whatever it
 * says. Everything a prompt carries that came from a document or a model (chunks, earlier hop
 * answers, searches a model wrote, a model's plan) goes inside; a text cannot close its own
 * fence, because the nonce is removed from it.
 */
export interface Fence {
  /** The marker's nonce, which the prompt names so the model knows where data starts and ends. */
  nonce: string;
  /** `text` between markers; `heading` (e.g. `E1 title="…"`) goes into the opening marker. */
  wrap(kind: 'DOCUMENT' | 'DATA', heading: string, text: string): string;
}

export function createFence(): Fence {
  const nonce = randomBytes(6).toString('hex');
  const clean = (text: string) => text.replaceAll(nonce, '');
  return {
    nonce,
    wrap: (kind, heading, text) => `<<<${kind} ${nonce} ${clean(heading)}>>>\n${clean(text)}\n<<<END ${nonce}>>>`,
  };
}

/** Retrieved chunks, each fenced with its label and title. */
export function fenceEvidence(fence: Fence, items: readonly { label: string; chunk: Chunk__Output }[]): string {
  return items
    .map(({ label, chunk }) => fence.wrap('DOCUMENT', `${label} title=${JSON.stringify(chunk.title)}`, chunk.text))
    .join('\n\n');
}
