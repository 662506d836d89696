// What the A/B benches (embedded-cpu-ab, distributed-cpu-ab) share: their command line and the
// commit each checkout is at, so that a result names the code it measured.
import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import type { Format } from './systems.js';

export interface AbOptions {
  /** The baseline's name in the results ("baseline" unless --label says otherwise). */
  label: string;
  /** Checkout root by name: the baseline's and this checkout's ("current"). */
  roots: Record<string, string>;
  /** The commit each checkout is at, by name; a copy without git says so. */
  commits: Record<string, string>;
  rounds: number;
  questionsPerRound: number;
  warmup: number;
  /** How the measured questions are answered: JSON, or an SSE stream read to its end. */
  format: Format;
}

const commitOf = (root: string) => {
  try {
    return execFileSync('git', ['-C', root, 'rev-parse', '--short', 'HEAD'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
  } catch {
    return 'a copy without git';
  }
};

/**
 * `--baseline <checkout> [--label <name>] [--rounds 6] [--questions 100] [--warmup <defaultWarmup>]`,
 * and `[--format json|sse]` where the bench `offersFormat` (else its questions are JSON).
 */
export function abOptions(defaultWarmup: number, offersFormat = false): AbOptions {
  const { values } = parseArgs({
    options: {
      baseline: { type: 'string' },
      label: { type: 'string', default: 'baseline' },
      rounds: { type: 'string', default: '6' },
      questions: { type: 'string', default: '100' },
      warmup: { type: 'string', default: String(defaultWarmup) },
      ...(offersFormat ? { format: { type: 'string', default: 'json' } as const } : {}),
    },
  });
  if (!values.baseline) throw new Error('--baseline <checkout> is required');
  const format = values.format ?? 'json';
  if (format !== 'json' && format !== 'sse') throw new Error('--format is json or sse');
  const here = fileURLToPath(new URL('../..', import.meta.url));
  const roots = { [values.label]: resolve(values.baseline), current: here };
  return {
    label: values.label,
    roots,
    commits: Object.fromEntries(Object.entries(roots).map(([name, root]) => [name, commitOf(root)])),
    rounds: Number(values.rounds),
    questionsPerRound: Number(values.questions),
    warmup: Number(values.warmup),
    format,
  };
}
