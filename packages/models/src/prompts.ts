import { readFileSync } from 'node:fs';
import type { ChatMessage } from './chat/chat-model.js';

/** The prompt files of one folder, each `<name>.md`, rendered with their `{{variables}}`. */
export interface PromptBook<Name extends string> {
  /**
   * A prompt with its `{{variables}}` filled in. A variable the template names but the caller
   * did not give is a bug, so it throws rather than sending "{{evidence}}" to a model.
   */
  render(name: Name, variables: Readonly<Record<string, string>>): string;
  /** A prompt file as chat messages: the part above `=== user ===` is the system message. */
  messages(name: Name, variables: Readonly<Record<string, string>>): ChatMessage[];
}

const USER_MARKER = '\n=== user ===\n';

/** The prompts in `directory` (a folder URL ending in `/`), each read once, when first used. */
export function createPromptBook<Name extends string>(directory: URL): PromptBook<Name> {
  const loaded = new Map<Name, string>();

  function template(name: Name): string {
    let text = loaded.get(name);
    if (text === undefined) {
      text = readFileSync(new URL(`${name}.md`, directory), 'utf8');
      loaded.set(name, text);
    }
    return text;
  }

  function render(name: Name, variables: Readonly<Record<string, string>>): string {
    return template(name).replace(/\{\{(\w+)\}\}/g, (_match, key: string) => {
      const value = variables[key];
      if (value === undefined) throw new Error(`prompt ${name} needs {{${key}}}`);
      return value;
    });
  }

  function messages(name: Name, variables: Readonly<Record<string, string>>): ChatMessage[] {
    const text = render(name, variables);
    const split = text.indexOf(USER_MARKER);
    if (split < 0) return [{ role: 'user', content: text.trim() }];
    return [
      { role: 'system', content: text.slice(0, split).trim() },
      { role: 'user', content: text.slice(split + USER_MARKER.length).trim() },
    ];
  }

  return { render, messages };
}
