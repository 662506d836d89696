import { open, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { ValidationError } from '@hopline/contracts';
import type { FusionMethod, HybridRetrieverOptions } from '@hopline/retrieval';
import { FUSION_METHODS } from '@hopline/retrieval';
import type { ReasoningSwitch } from '@hopline/reasoning';
import { REASONING_SWITCH_NAMES } from '@hopline/reasoning';
import { loadCorpusQuestions } from './data/corpus-questions.js';
import type { EvalSet } from './data/eval-set.js';
import { loadMultihopFile } from './data/multihop-file.js';
import type { Split } from './data/selection.js';
import { foldCounts, selectQuestions, SPLITS } from './data/selection.js';
import { evalModes } from './modes/index.js';
import { outcomeRecord } from './records.js';
import { formatReport } from './report.js';
import { runEval } from './run-eval.js';

export const usage = `usage: pnpm eval (--data <file|dir> | --corpus <jsonl> --questions <jsonl>) [options]
  --data FILE          a multi-hop file (../shared/data/multihop/dev.jsonl): its paragraphs pooled into one corpus
  --data DIR           a folder holding corpus.jsonl and questions.jsonl (the ChronoQA layout)
  --corpus, --questions  the same two files named one by one
  --mode ${[...evalModes.keys()].join('|')}    single: BM25 and one hybrid retrieval per question (default);
                       multihop: also the hop loop, and a single-shot answer from one hop, in the same run
  --k N                recall@k, MRR@k (default 10)
  --split ${SPLITS.join('|')}  the questions of one half: a question is in tune when the first 32 bits of the
                       SHA-256 of its id are even, in check when odd (default all)
  --limit N            the first N questions of the split; --ids A,B  only those questions (to replay them).
                       The corpus stays whole: a question scores as it does in the full run
  --unanswerable N     ask N of the questions again over a copy of the corpus without one of their gold
                       documents (multihop), for abstention precision and recall
  --ablate             run multi-hop again once per reasoning rule or mechanism, that one switched off, and
                       print the change of each figure per data set (multihop; one more run per switch)
  --switch-off A,B     these reasoning switches off in every run (entityGraph: hops send no seeds to the entity
                       graph beside the indexes); with --ablate, each other switch goes off in turn as well
  --out FILE           one JSON line per question: hops, evidence, answer, stop reason, break point, metrics
  --json               print the report as one JSON object
  --fusion ${FUSION_METHODS.join('|')}, --bm25-weight W, --vector-weight W
                       default to what the embedder declares (the offline one: relative-score, vector 0.1)`;

function nonNegativeNumber(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const parsed = Number(value);
  if (!Number.isFinite(parsed) || parsed < 0)
    throw new ValidationError(`--${name} must be a non-negative number, got "${value}"`);
  return parsed;
}

function positiveInteger(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 1)
    throw new ValidationError(`--${name} must be a positive integer, got "${value}"`);
  return parsed;
}

function oneOf<T extends string>(name: string, value: string, allowed: readonly T[]): T {
  if (!(allowed as readonly string[]).includes(value))
    throw new ValidationError(`unknown --${name} "${value}"; one of ${allowed.join(', ')}`);
  return value as T;
}

async function loadSet(values: { data?: string; corpus?: string; questions?: string }): Promise<EvalSet> {
  if (values.data !== undefined && (values.corpus !== undefined || values.questions !== undefined))
    throw new ValidationError('give --data, or --corpus with --questions, not both');
  if (values.data !== undefined) {
    const folder = await stat(values.data).then(
      (found) => found.isDirectory(),
      () => false,
    );
    return folder
      ? loadCorpusQuestions({
          corpus: join(values.data, 'corpus.jsonl'),
          questions: join(values.data, 'questions.jsonl'),
        })
      : loadMultihopFile(values.data);
  }
  if (values.corpus === undefined || values.questions === undefined)
    throw new ValidationError('--data, or --corpus with --questions, is required');
  return loadCorpusQuestions({ corpus: values.corpus, questions: values.questions });
}

/** Lines the CLI prints; the process prints them to stdout, a test keeps them. */
export interface CliOutput {
  print(text: string): void;
}

/** `pnpm eval` with its arguments (without node and the script). */
export async function runCli(argv: readonly string[], output: CliOutput): Promise<void> {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      data: { type: 'string' },
      corpus: { type: 'string' },
      questions: { type: 'string' },
      mode: { type: 'string', default: 'single' },
      k: { type: 'string' },
      split: { type: 'string', default: 'all' },
      limit: { type: 'string' },
      ids: { type: 'string' },
      unanswerable: { type: 'string' },
      out: { type: 'string' },
      ablate: { type: 'boolean', default: false },
      'switch-off': { type: 'string' },
      json: { type: 'boolean', default: false },
      fusion: { type: 'string' },
      'bm25-weight': { type: 'string' },
      'vector-weight': { type: 'string' },
      help: { type: 'boolean', default: false },
    },
    strict: true,
  });
  if (values.help) {
    output.print(usage);
    return;
  }
  const mode = evalModes.get(values.mode);
  if (!mode) throw new ValidationError(`unknown --mode "${values.mode}"; one of ${[...evalModes.keys()].join(', ')}`);
  const k = positiveInteger('k', values.k) ?? 10;
  const split = oneOf<Split>('split', values.split, SPLITS);
  const limit = positiveInteger('limit', values.limit);
  const unanswerable = positiveInteger('unanswerable', values.unanswerable);
  const fusion = values.fusion === undefined ? undefined : oneOf<FusionMethod>('fusion', values.fusion, FUSION_METHODS);
  const hybrid: Partial<HybridRetrieverOptions> = {
    fusion,
    bm25Weight: nonNegativeNumber('bm25-weight', values['bm25-weight']),
    vectorWeight: nonNegativeNumber('vector-weight', values['vector-weight']),
  };

  const switchedOff = (values['switch-off'] ?? '')
    .split(',')
    .map((name) => name.trim())
    .filter(Boolean)
    .map((name) => oneOf<ReasoningSwitch>('switch-off', name, REASONING_SWITCH_NAMES));

  const set = await loadSet(values);
  const ids = values.ids
    ?.split(',')
    .map((id) => id.trim())
    .filter(Boolean);
  const questions = selectQuestions(set.questions, {
    split,
    ...(ids ? { ids } : {}),
    ...(limit === undefined ? {} : { limit }),
  });
  const halves = Object.entries(foldCounts(set.questions))
    .map(([dataset, counts]) => `${dataset} ${counts.tune}/${counts.check}`)
    .join(', ');
  const selection = {
    split,
    questions: questions.length,
    of: set.questions.length,
    tuneCheck: foldCounts(set.questions),
  };

  const out = values.out === undefined ? undefined : await open(values.out, 'w');
  try {
    const report = await runEval(set, questions, {
      mode,
      k,
      hybrid,
      ...(unanswerable === undefined ? {} : { unanswerable }),
      ablate: values.ablate,
      ...(switchedOff.length > 0 ? { switchedOff } : {}),
      ...(out
        ? {
            onOutcome: async (outcome) => {
              await out.write(`${JSON.stringify(outcomeRecord(outcome, k))}\n`);
            },
          }
        : {}),
    });
    if (values.json) output.print(JSON.stringify({ ...report, selection }));
    else
      output.print(
        `split ${split}: ${questions.length} of ${set.questions.length} questions (tune/check per data set: ${halves})\n` +
          formatReport(report),
      );
  } finally {
    await out?.close();
  }
}
