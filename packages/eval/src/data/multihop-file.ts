import { readFile } from 'node:fs/promises';
import { hashText } from '@hopline/text';
import { z } from 'zod';
import type { EvalDocument, EvalSet } from './eval-set.js';
import { completeSet } from './eval-set.js';
import { parseJsonLines } from './jsonl.js';

/** One line of the multi-hop dev file; the schema is in `data/multihop/README.md`. */
const lineSchema = z
  .object({
    id: z.string().min(1),
    dataset: z.enum(['hotpotqa', '2wikimultihopqa', 'musique']),
    question: z.string().min(1),
    answer: z.string(),
    answer_aliases: z.array(z.string()),
    type: z.string(),
    supporting: z
      .array(
        z.object({
          title: z.string(),
          sent_ids: z.array(z.number().int().nonnegative()),
          paragraph_index: z.number().int().nonnegative(),
        }),
      )
      .min(1),
    paragraphs: z.array(z.object({ title: z.string(), sentences: z.array(z.string()) })).min(1),
  })
  .superRefine((line, ctx) => {
    line.supporting.forEach((support, index) => {
      if (support.paragraph_index >= line.paragraphs.length) {
        ctx.addIssue({
          code: 'custom',
          path: ['supporting', index, 'paragraph_index'],
          message: `points past the ${line.paragraphs.length} paragraphs`,
        });
      }
    });
  });

export interface Paragraph {
  title: string;
  sentences: string[];
}

// MuSiQue lists its supporting paragraphs in the hop order of its decomposition; HotpotQA and
// 2Wiki in order of first mention in their supporting facts, which says nothing about hops.
const HOP_ORDERED = new Set(['musique']);

/**
 * A paragraph's text from its sentences. HotpotQA sentences carry their own leading space,
 * 2Wiki's do not, so a space is added only where neither side of the join has one.
 */
export function paragraphText(paragraph: Paragraph): string {
  let text = '';
  for (const sentence of paragraph.sentences) {
    if (text.length > 0 && !/\s$/.test(text) && !/^\s/.test(sentence)) text += ' ';
    text += sentence;
  }
  return text;
}

/** A paragraph's identity is its title and text: the same paragraph in two contexts is one document. */
export function paragraphDocId(paragraph: Paragraph): string {
  return `p-${hashText(`${paragraph.title}\u0000${paragraphText(paragraph)}`)}`;
}

/**
 * The multi-hop file as a corpus and questions: every paragraph of every question pooled into
 * one corpus (thousands of paragraphs, identical ones once), so each question is asked against
 * the whole of it, not against its own ten or twenty.
 */
export function parseMultihopFile(content: string, source: string): EvalSet {
  const documents = new Map<string, EvalDocument>();
  const questions = parseJsonLines(content, source, lineSchema).map((line) => {
    const docIds = line.paragraphs.map((paragraph) => {
      const docId = paragraphDocId(paragraph);
      if (!documents.has(docId))
        documents.set(docId, { docId, title: paragraph.title, text: paragraphText(paragraph), effectiveDate: '' });
      return docId;
    });
    return {
      id: line.id,
      dataset: line.dataset,
      question: line.question,
      answers: [line.answer, ...line.answer_aliases],
      goldDocIds: [...new Set(line.supporting.map((support) => docIds[support.paragraph_index] as string))],
      hopOrdered: HOP_ORDERED.has(line.dataset),
      answerable: true,
    };
  });
  return completeSet([...documents.values()], questions);
}

export async function loadMultihopFile(path: string): Promise<EvalSet> {
  return parseMultihopFile(await readFile(path, 'utf8'), path);
}
