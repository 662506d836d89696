import { readFile } from 'node:fs/promises';
import { ValidationError } from '@hopline/contracts';
import { z } from 'zod';

/** One line of the multi-hop dev set; the schema is in `data/multihop/README.md`. */
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

export type DatasetName = z.infer<typeof lineSchema>['dataset'];

export interface Paragraph {
  title: string;
  sentences: string[];
}

export interface MultihopQuestion {
  id: string;
  dataset: DatasetName;
  question: string;
  answer: string;
  answerAliases: string[];
  type: string;
  supporting: Array<{ title: string; sentIds: number[]; paragraphIndex: number }>;
  paragraphs: Paragraph[];
}

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

/** Parses and validates a JSON-lines dataset; a bad line fails with its line number. */
export function parseDataset(content: string, source: string): MultihopQuestion[] {
  const questions: MultihopQuestion[] = [];
  content.split('\n').forEach((line, index) => {
    if (line.trim().length === 0) return;
    let raw: unknown;
    try {
      raw = JSON.parse(line);
    } catch (error) {
      throw new ValidationError(`${source}:${index + 1}: not JSON: ${(error as Error).message}`);
    }
    const parsed = lineSchema.safeParse(raw);
    if (!parsed.success) {
      const problems = parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ');
      throw new ValidationError(`${source}:${index + 1}: ${problems}`);
    }
    const value = parsed.data;
    questions.push({
      id: value.id,
      dataset: value.dataset,
      question: value.question,
      answer: value.answer,
      answerAliases: value.answer_aliases,
      type: value.type,
      supporting: value.supporting.map((s) => ({
        title: s.title,
        sentIds: s.sent_ids,
        paragraphIndex: s.paragraph_index,
      })),
      paragraphs: value.paragraphs,
    });
  });
  return questions;
}

export async function loadDataset(path: string, options: { limit?: number } = {}): Promise<MultihopQuestion[]> {
  const questions = parseDataset(await readFile(path, 'utf8'), path);
  return options.limit === undefined ? questions : questions.slice(0, options.limit);
}
