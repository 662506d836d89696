import { selectedDocIds, type DocumentKey, type SearchScope } from '../types.js';

/**
 * Filters as Milvus expression templates: the expression text is fixed and every id travels
 * as a typed template value (`expr_template_values`), so no tenant, kb or document id is ever
 * parsed as expression syntax — a kb id like `x" || tenant_id != "` is just a string to match.
 */
export interface MilvusFilter {
  filter: string;
  exprValues: Record<string, string | number | string[]>;
}

/** The caller's verified scope. `tenant_id` is the partition key, so Milvus searches one partition. */
export function scopeFilter(scope: SearchScope): MilvusFilter {
  const kbs = {
    filter: 'tenant_id == {tenant_id} && kb_id in {kb_ids}',
    exprValues: { tenant_id: scope.tenantId, kb_ids: [...scope.kbIds] },
  };
  const docIds = selectedDocIds(scope);
  if (!docIds) return kbs;
  return { filter: `${kbs.filter} && doc_id in {doc_ids}`, exprValues: { ...kbs.exprValues, doc_ids: [...docIds] } };
}

export function kbFilter(tenantId: string, kbId: string): MilvusFilter {
  return { filter: 'tenant_id == {tenant_id} && kb_id == {kb_id}', exprValues: { tenant_id: tenantId, kb_id: kbId } };
}

export function documentFilter(key: DocumentKey): MilvusFilter {
  return {
    filter: 'tenant_id == {tenant_id} && kb_id == {kb_id} && doc_id == {doc_id}',
    exprValues: { tenant_id: key.tenantId, kb_id: key.kbId, doc_id: key.docId },
  };
}

/** The rows of some documents of one kb: a batch write reads their records and chunks with it. */
export function documentsFilter(tenantId: string, kbId: string, docIds: readonly string[]): MilvusFilter {
  const kb = kbFilter(tenantId, kbId);
  return { filter: `${kb.filter} && doc_id in {doc_ids}`, exprValues: { ...kb.exprValues, doc_ids: [...docIds] } };
}

/** Rows by primary key: what a batch removes once it knows which rows are stale. */
export function keysFilter(keys: readonly string[]): MilvusFilter {
  return { filter: 'pk in {pks}', exprValues: { pks: [...keys] } };
}

/** The document's rows below `version`, or up to it when `inclusive` (a delete at that version). */
export function olderVersionsFilter(key: DocumentKey, version: number, inclusive: boolean): MilvusFilter {
  const document = documentFilter(key);
  return {
    filter: `${document.filter} && doc_version ${inclusive ? '<=' : '<'} {doc_version}`,
    exprValues: { ...document.exprValues, doc_version: version },
  };
}

/** The live document records, for listing the knowledge bases. */
export const LIVE_RECORDS: MilvusFilter = { filter: 'deleted == false', exprValues: {} };

/** The rows of `filter` after `afterPk`: one page of a query read in primary-key order. */
export function pageAfter(filter: MilvusFilter, afterPk: string): MilvusFilter {
  return { filter: `${filter.filter} && pk > {after}`, exprValues: { ...filter.exprValues, after: afterPk } };
}
