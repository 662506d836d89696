import { ValidationError } from '@hopline/contracts';
import type { SearchScope } from './types.js';

/** A scope that names no tenant or no knowledge base must fail loudly, never widen to "all". */
export function assertScope(scope: SearchScope): void {
  if (!scope.tenantId) throw new ValidationError('search scope has no tenant');
  if (scope.kbIds.length === 0) throw new ValidationError('search scope names no knowledge base');
  if (scope.kbIds.some((kbId) => !kbId)) throw new ValidationError('search scope names an empty knowledge base id');
  if (scope.docIds?.some((docId) => !docId)) throw new ValidationError('search scope names an empty document id');
}
