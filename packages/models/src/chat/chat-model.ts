import type { z } from 'zod';
import type { UsageMeter } from '../usage.js';

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

export interface ChatUsage {
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
}

export interface ChatRequest {
  messages: readonly ChatMessage[];
  /** 0 for planning and extraction, where the same evidence must give the same answer. */
  temperature?: number;
  maxTokens?: number;
  /** The question's absolute deadline (ms since the Unix epoch): no attempt starts past it. */
  deadlineUnixMs: number;
  /** Aborting it cancels the request, streaming included. */
  signal?: AbortSignal;
  /** The question's spend: every request is checked against it and recorded in it. */
  meter?: UsageMeter;
}

export interface JsonChatRequest<T> extends ChatRequest {
  /** The reply must parse as JSON and validate; a malformed one gets one repair attempt. */
  json: z.ZodType<T>;
}

export interface ChatResult<T> {
  value: T;
  /** The reply as the model wrote it (the repaired one, when a repair was needed). */
  text: string;
  usage: ChatUsage;
  model: string;
}

/** The chat port: one adapter per kind of model server. */
export interface ChatModel {
  /** The model's name, as spans and logs report it. */
  readonly model: string;
  complete(request: ChatRequest): Promise<ChatResult<string>>;
  complete<T>(request: JsonChatRequest<T>): Promise<ChatResult<T>>;
  /** Text deltas as the model writes them; resolves to the usage once the stream ends. */
  stream(request: ChatRequest): AsyncGenerator<string, ChatUsage>;
}

export const addUsage = (a: ChatUsage, b: ChatUsage): ChatUsage => ({
  promptTokens: a.promptTokens + b.promptTokens,
  completionTokens: a.completionTokens + b.completionTokens,
  totalTokens: a.totalTokens + b.totalTokens,
});

export const NO_USAGE: ChatUsage = { promptTokens: 0, completionTokens: 0, totalTokens: 0 };
