import { ValidationError } from '@hopline/contracts';
import { hashText } from '@hopline/text';
import type { EvalQuestion } from './eval-set.js';

export const SPLITS = ['all', 'tune', 'check'] as const;
export type Split = (typeof SPLITS)[number];
export type Fold = Exclude<Split, 'all'>;

/**
 * A question's half of the 2-fold split: `tune` when the first 32 bits of the SHA-256 of its
 * id are even, `check` when odd. It depends on the id alone, so a question keeps its half
 * whatever file, order or other questions it comes with; about half of every data set falls
 * in each (the file's line order, itself sorted by that hash, plays no part).
 */
export function foldOf(id: string): Fold {
  return Number.parseInt(hashText(id).slice(0, 8), 16) % 2 === 0 ? 'tune' : 'check';
}

export interface Selection {
  split: Split;
  /** Only these questions (to replay them), in the file's order. */
  ids?: readonly string[];
  /** The first n questions of the split. */
  limit?: number;
}

/** The questions a run asks; the corpus stays whole whatever is selected. */
export function selectQuestions(questions: readonly EvalQuestion[], selection: Selection): EvalQuestion[] {
  let selected = questions.filter((question) => selection.split === 'all' || foldOf(question.id) === selection.split);
  if (selection.ids) {
    const known = new Set(questions.map((question) => question.id));
    const unknown = selection.ids.filter((id) => !known.has(id));
    if (unknown.length > 0) throw new ValidationError(`no question has the id ${unknown.join(', ')}`);
    const wanted = new Set(selection.ids);
    selected = selected.filter((question) => wanted.has(question.id));
  }
  return selection.limit === undefined ? selected : selected.slice(0, selection.limit);
}

/** Questions per data set in each half of the split. */
export function foldCounts(questions: readonly EvalQuestion[]): Record<string, Record<Fold, number>> {
  const counts: Record<string, Record<Fold, number>> = {};
  for (const question of questions) {
    const row = (counts[question.dataset] ??= { tune: 0, check: 0 });
    row[foldOf(question.id)] += 1;
  }
  return Object.fromEntries(Object.entries(counts).sort(([a], [b]) => a.localeCompare(b)));
}
