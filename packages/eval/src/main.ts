import { parseArgs } from 'node:util';
import { ValidationError } from '@hopline/contracts';
import type { FusionMethod, HybridRetrieverOptions } from '@hopline/retrieval';
import { FUSION_METHODS } from '@hopline/retrieval';
import { loadDataset } from './dataset.js';
import { evalModes } from './modes/index.js';
import { formatReport, runEval } from './run-eval.js';

const usage =
  `usage: pnpm eval --data <jsonl> [--mode ${[...evalModes.keys()].join('|')}] [--k 10] [--limit N] [--json]\n` +
  `                 [--fusion ${FUSION_METHODS.join('|')}] [--bm25-weight W] [--vector-weight W]\n` +
  `  fusion and weights default to what the embedder declares (the offline one: relative-score, vector 0.1)`;

function nonNegativeNumber(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const parsed = Number(value);
  if (!Number.isFinite(parsed) || parsed < 0)
    throw new ValidationError(`--${name} must be a non-negative number, got "${value}"`);
  return parsed;
}

function positiveInteger(name: string, value: string | undefined, fallback?: number): number | undefined {
  if (value === undefined) return fallback;
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 1)
    throw new ValidationError(`--${name} must be a positive integer, got "${value}"`);
  return parsed;
}

function isFusionMethod(value: string): value is FusionMethod {
  return (FUSION_METHODS as readonly string[]).includes(value);
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      data: { type: 'string' },
      mode: { type: 'string', default: 'single' },
      k: { type: 'string' },
      limit: { type: 'string' },
      json: { type: 'boolean', default: false },
      fusion: { type: 'string' },
      'bm25-weight': { type: 'string' },
      'vector-weight': { type: 'string' },
    },
    strict: true,
  });
  if (!values.data) throw new ValidationError(`--data is required\n${usage}`);
  const mode = evalModes.get(values.mode);
  if (!mode) throw new ValidationError(`unknown --mode "${values.mode}"\n${usage}`);
  const k = positiveInteger('k', values.k, 10) as number;
  const limit = positiveInteger('limit', values.limit);

  const questions = await loadDataset(values.data, limit === undefined ? {} : { limit });
  const fusion = values.fusion;
  if (fusion !== undefined && !isFusionMethod(fusion))
    throw new ValidationError(`unknown --fusion "${fusion}"\n${usage}`);
  const hybrid: Partial<HybridRetrieverOptions> = {
    fusion,
    bm25Weight: nonNegativeNumber('bm25-weight', values['bm25-weight']),
    vectorWeight: nonNegativeNumber('vector-weight', values['vector-weight']),
  };
  const report = await runEval(questions, { mode, k, hybrid });
  if (values.json) console.log(JSON.stringify(report));
  else console.log(formatReport(report));
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : String(error));
  process.exitCode = 1;
});
