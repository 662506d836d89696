import { parseArgs } from 'node:util';
import { ValidationError } from '@hopline/contracts';
import { loadDataset } from './dataset.js';
import { evalModes } from './modes/index.js';
import { formatReport, runEval } from './run-eval.js';

const usage =
  `usage: pnpm eval --data <jsonl> [--mode ${[...evalModes.keys()].join('|')}] [--k 10] [--limit N] [--json]\n` +
  `                 [--bm25-weight W] [--vector-weight W]   RRF weights of the two paths`;

function nonNegativeNumber(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const parsed = Number(value);
  if (!Number.isFinite(parsed) || parsed < 0) throw new ValidationError(`--${name} must be a non-negative number, got "${value}"`);
  return parsed;
}

function positiveInteger(name: string, value: string | undefined, fallback?: number): number | undefined {
  if (value === undefined) return fallback;
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 1) throw new ValidationError(`--${name} must be a positive integer, got "${value}"`);
  return parsed;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      data: { type: 'string' },
      mode: { type: 'string', default: 'single' },
      k: { type: 'string' },
      limit: { type: 'string' },
      json: { type: 'boolean', default: false },
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
  const hybrid: { bm25Weight?: number; vectorWeight?: number } = {};
  const bm25Weight = nonNegativeNumber('bm25-weight', values['bm25-weight']);
  const vectorWeight = nonNegativeNumber('vector-weight', values['vector-weight']);
  if (bm25Weight !== undefined) hybrid.bm25Weight = bm25Weight;
  if (vectorWeight !== undefined) hybrid.vectorWeight = vectorWeight;
  const report = await runEval(questions, { mode, k, hybrid });
  if (values.json) console.log(JSON.stringify(report));
  else console.log(formatReport(report));
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : String(error));
  process.exitCode = 1;
});
