import { parseArgs } from 'node:util';
import { ValidationError } from '@hopline/contracts';
import { loadDataset } from './dataset.js';
import { evalModes } from './modes/index.js';
import { formatReport, runEval } from './run-eval.js';

const usage = `usage: pnpm eval --data <jsonl> [--mode ${[...evalModes.keys()].join('|')}] [--k 10] [--limit N] [--json]`;

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
    },
    strict: true,
  });
  if (!values.data) throw new ValidationError(`--data is required\n${usage}`);
  const mode = evalModes.get(values.mode);
  if (!mode) throw new ValidationError(`unknown --mode "${values.mode}"\n${usage}`);
  const k = positiveInteger('k', values.k, 10) as number;
  const limit = positiveInteger('limit', values.limit);

  const questions = await loadDataset(values.data, limit === undefined ? {} : { limit });
  const report = await runEval(questions, { mode, k });
  if (values.json) console.log(JSON.stringify(report));
  else console.log(formatReport(report));
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : String(error));
  process.exitCode = 1;
});
