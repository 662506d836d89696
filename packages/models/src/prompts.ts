import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Chunk__Output } from '@hopline/contracts';
import type { ChatMessage } from './chat/chat-model.js';

/** The tasks that have a prompt file under `packages/models/prompts/`. */
export type PromptName = 'decompose' | 'hyde' | 'extract-hop' | 'synthesize' | 'repair-json';

const PROMPT_DIRECTORY = new URL('../prompts/', import.meta.url);
const loaded = new Map<PromptName, string>();

function template(name: PromptName): string {
  let text = loaded.get(name);
  if (text === undefined) {
    text = readFileSync(new URL(`${name}.md`, PROMPT_DIRECTORY), 'utf8');
    loaded.set(name, text);
  }
  return text;
}

/**
 * A prompt with its `{{variables}}` filled in. A variable the template names but the caller
 * did not give is a bug, so it throws rather than sending "{{evidence}}" to a model.
 */
export function renderPrompt(name: PromptName, variables: Readonly<Record<string, string>>): string {
  return template(name).replace(/\{\{(\w+)\}\}/g, (_match, key: string) => {
    const value = variables[key];
    if (value === undefined) throw new Error(`prompt ${name} needs {{${key}}}`);
    return value;
  });
}

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

const USER_MARKER = '\n=== user ===\n';

/** A prompt file as chat messages: the part above `=== user ===` is the system message. */
export function promptMessages(name: PromptName, variables: Readonly<Record<string, string>>): ChatMessage[] {
  const text = renderPrompt(name, variables);
  const split = text.indexOf(USER_MARKER);
  if (split < 0) return [{ role: 'user', content: text.trim() }];
  return [
    { role: 'system', content: text.slice(0, split).trim() },
    { role: 'user', content: text.slice(split + USER_MARKER.length).trim() },
  ];
}
