import { HoplineError } from '@hopline/contracts';

/** A question has used up its LLM calls or tokens: the loop stops with BUDGET. */
export class BudgetExhaustedError extends HoplineError {
  constructor(message: string) {
    super('resource_exhausted', message);
  }
}

export interface UsageLimits {
  /** LLM requests allowed per question (a repair attempt is a request). */
  maxLlmCalls: number;
  /** Prompt plus completion tokens allowed per question. */
  maxTokens: number;
}

/**
 * One question's LLM spend. Adapters call `beforeCall` before every request they send
 * (retries and repairs included) and `record` after it, whether it failed or not, so every
 * request is counted with the tokens the server reported for it.
 */
export class UsageMeter {
  llmCalls = 0;
  tokens = 0;

  constructor(
    readonly limits: UsageLimits = { maxLlmCalls: Number.POSITIVE_INFINITY, maxTokens: Number.POSITIVE_INFINITY },
  ) {}

  get exhausted(): boolean {
    return this.llmCalls >= this.limits.maxLlmCalls || this.tokens >= this.limits.maxTokens;
  }

  beforeCall(): void {
    if (this.llmCalls >= this.limits.maxLlmCalls) {
      throw new BudgetExhaustedError(`the question has used its ${this.limits.maxLlmCalls} LLM calls`);
    }
    if (this.tokens >= this.limits.maxTokens) {
      throw new BudgetExhaustedError(`the question has used ${this.tokens} of its ${this.limits.maxTokens} tokens`);
    }
  }

  record(tokens: number): void {
    this.llmCalls += 1;
    this.tokens += tokens;
  }

  /** Requests made and tokens spent elsewhere for the same question (its analysis, in another service). */
  include(spend: { llmCalls: number; tokens: number }): void {
    this.llmCalls += spend.llmCalls;
    this.tokens += spend.tokens;
  }

  /** Tokens of a request already recorded: a stream reports its usage only when it ends. */
  addTokens(tokens: number): void {
    this.tokens += tokens;
  }

  /** Tokens the question may still spend (prompt and completion together). */
  get tokensLeft(): number {
    return Math.max(0, this.limits.maxTokens - this.tokens);
  }
}
