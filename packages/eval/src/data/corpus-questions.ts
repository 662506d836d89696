import { readFile } from 'node:fs/promises';
import { basename, extname } from 'node:path';
import { z } from 'zod';
import type { EvalSet } from './eval-set.js';
import { completeSet } from './eval-set.js';
import { parseJsonLines } from './jsonl.js';

/**
 * The corpus-and-questions format (the ChronoQA layout, `data/chronoqa/README.md`): any corpus
 * and questions asked over it. Fields beyond these (source, url, lang, type, fact) are allowed
 * and not read.
 */
const documentSchema = z.object({
  id: z.string().min(1),
  title: z.string().nullish(),
  text: z.string(),
  published_at: z
    .string()
    .regex(/^\d{4}-\d{2}-\d{2}/, 'must start with an ISO date (YYYY-MM-DD)')
    .nullish(),
});

const questionSchema = z
  .object({
    id: z.string().min(1),
    dataset: z.string().min(1).optional(),
    question: z.string().min(1),
    answer: z.string(),
    answer_aliases: z.array(z.string()).default([]),
    answerable: z.boolean().default(true),
    evidence: z.array(z.object({ doc_id: z.string().min(1) })),
  })
  .refine((line) => !line.answerable || line.evidence.length > 0, {
    message: 'an answerable question needs at least one evidence document',
    path: ['evidence'],
  });

export interface CorpusQuestionsFiles {
  corpus: { content: string; source: string };
  questions: { content: string; source: string };
}

/** A question line without a `dataset` is reported under its file's name. */
export function parseCorpusQuestions(files: CorpusQuestionsFiles): EvalSet {
  const documents = parseJsonLines(files.corpus.content, files.corpus.source, documentSchema).map((line) => ({
    docId: line.id,
    title: line.title ?? '',
    text: line.text,
    effectiveDate: line.published_at?.slice(0, 10) ?? '',
  }));
  const fallbackDataset = basename(files.questions.source, extname(files.questions.source));
  const questions = parseJsonLines(files.questions.content, files.questions.source, questionSchema).map((line) => ({
    id: line.id,
    dataset: line.dataset ?? fallbackDataset,
    question: line.question,
    answers: line.answerable ? [line.answer, ...line.answer_aliases] : [],
    goldDocIds: [...new Set(line.evidence.map((evidence) => evidence.doc_id))],
    hopOrdered: false,
    answerable: line.answerable,
  }));
  return completeSet(documents, questions);
}

export async function loadCorpusQuestions(paths: { corpus: string; questions: string }): Promise<EvalSet> {
  const [corpus, questions] = await Promise.all([readFile(paths.corpus, 'utf8'), readFile(paths.questions, 'utf8')]);
  return parseCorpusQuestions({
    corpus: { content: corpus, source: paths.corpus },
    questions: { content: questions, source: paths.questions },
  });
}
