import type { Chunk__Output } from '@hopline/contracts';
import { Grade, type Grade__Output } from '@hopline/contracts';
import { containsStem, contentTerms } from '@hopline/text';

const RELEVANT_SHARE = 0.5;

/**
 * How well a hop's best evidence matches its query: the share of the query's content terms
 * the top chunk (title and text) contains: half or more is RELEVANT, some AMBIGUOUS, none (or no
 * evidence at all) IRRELEVANT.
 */
export function gradeEvidence(query: string, chunks: readonly Chunk__Output[]): Grade__Output {
  const top = chunks[0];
  const wanted = [...new Set(contentTerms(query))];
  if (!top || wanted.length === 0) return Grade.IRRELEVANT;
  const present = contentTerms(`${top.title} ${top.text}`);
  const share = wanted.filter((term) => containsStem(present, term)).length / wanted.length;
  if (share >= RELEVANT_SHARE) return Grade.RELEVANT;
  return share > 0 ? Grade.AMBIGUOUS : Grade.IRRELEVANT;
}
