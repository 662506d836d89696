import type { Document__Output } from '@hopline/contracts';
import type { Indexer } from '@hopline/retrieval';
import { hashText } from '@hopline/text';
import type { MultihopQuestion, Paragraph } from './dataset.js';
import { paragraphText } from './dataset.js';

export interface KnowledgeBase {
  tenantId: string;
  kbId: string;
  /** One document per distinct paragraph of the dataset. */
  documents: Document__Output[];
  /** The document id of a question's paragraph. */
  docIdOf(question: MultihopQuestion, paragraphIndex: number): string;
  /** The document ids of a question's gold (supporting) paragraphs, without repeats. */
  goldDocIds(question: MultihopQuestion): string[];
}

/** A paragraph's identity is its title and text: the same paragraph in two contexts is one document. */
export function paragraphDocId(paragraph: Paragraph): string {
  return `p-${hashText(`${paragraph.title}\u0000${paragraphText(paragraph)}`)}`;
}

/**
 * Pools every paragraph of every question into one knowledge base, so each question is asked
 * against the whole corpus (thousands of paragraphs), not against its own ten or twenty.
 */
export function buildKnowledgeBase(
  questions: readonly MultihopQuestion[],
  scope: { tenantId: string; kbId: string } = { tenantId: 'eval', kbId: 'multihop' },
): KnowledgeBase {
  const documents = new Map<string, Document__Output>();
  for (const question of questions) {
    for (const paragraph of question.paragraphs) {
      const docId = paragraphDocId(paragraph);
      if (documents.has(docId)) continue;
      documents.set(docId, {
        tenantId: scope.tenantId,
        kbId: scope.kbId,
        docId,
        version: 1,
        title: paragraph.title,
        text: paragraphText(paragraph),
        effectiveDate: '',
        sourceUri: '',
        metadata: {},
      });
    }
  }
  const docIdOf = (question: MultihopQuestion, paragraphIndex: number): string => {
    const paragraph = question.paragraphs[paragraphIndex];
    if (!paragraph) throw new RangeError(`question ${question.id} has no paragraph ${paragraphIndex}`);
    return paragraphDocId(paragraph);
  };
  return {
    ...scope,
    documents: [...documents.values()],
    docIdOf,
    goldDocIds: (question) => [
      ...new Set(question.supporting.map((support) => docIdOf(question, support.paragraphIndex))),
    ],
  };
}

/** Ingests every document through the indexer, as the retrieval-worker's consumer would. */
export async function ingestKnowledgeBase(
  kb: KnowledgeBase,
  indexer: Indexer,
  signal?: AbortSignal,
): Promise<{ documents: number; chunks: number; ms: number }> {
  const started = performance.now();
  let chunks = 0;
  for (const document of kb.documents) {
    const result = await indexer.apply({ op: 'upsert', upsert: document }, signal);
    chunks += result.chunks;
  }
  return { documents: kb.documents.length, chunks, ms: performance.now() - started };
}
