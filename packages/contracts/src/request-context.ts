import { ValidationError } from './errors.js';
import type { RequestContext__Output } from './generated/hopline/v1/RequestContext.js';
import type { Scope__Output } from './generated/hopline/v1/Scope.js';

/** A RequestContext whose required parts have been checked. */
export interface ValidRequestContext {
  questionId: string;
  scope: Scope__Output;
  deadlineUnixMs: number;
}

/** Rejects a context that lacks a question id, a tenant, a kb, or a deadline. */
export function requireRequestContext(ctx: RequestContext__Output | null | undefined): ValidRequestContext {
  if (!ctx) throw new ValidationError('request context is missing');
  if (!ctx.questionId) throw new ValidationError('request context has no question id');
  const scope = ctx.scope;
  if (!scope?.tenantId) throw new ValidationError('request scope has no tenant');
  if (scope.kbIds.length === 0) throw new ValidationError('request scope names no knowledge base');
  if (!Number.isFinite(ctx.deadlineUnixMs) || ctx.deadlineUnixMs <= 0) {
    throw new ValidationError('request context has no deadline');
  }
  return { questionId: ctx.questionId, scope, deadlineUnixMs: ctx.deadlineUnixMs };
}
