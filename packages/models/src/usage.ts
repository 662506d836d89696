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
 * One question's LLM spend. Adapters call `beforeCall` before every request and `record`
 * after it, so a failed or repaired reply is counted as what it cost.
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
}
