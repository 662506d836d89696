// How long query understanding's rules take per question (issue 6: rules first, "well under a
// millisecond"), against a trivial baseline in the same run: one regular-expression test of the
// question, the least any router could do. Variants:
//   baseline   /compare|vs|对比|…/.test(question)
//   rules      analyzeByRules(question): every signal, the route, the complexity and the plan
//   analyzer   createAnalyzer().analyze(question): the rules behind the service's async entry
//              point, without a model (what the service runs when no OPENAI_BASE_URL is set)
// Questions: the multi-hop dev set plus a few Chinese ones. Each round times every question once
// per variant, variants interleaved, so drift on a shared machine hits all alike.
//
//   node --conditions=@hopline/source --import tsx bench/reasoning.ts [path/to/questions.jsonl]
import { readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { analyzeByRules, createAnalyzer } from '@hopline/reasoning';
import { machineDescription } from './support/machine.js';

const WARMUP_ROUNDS = 3;
const ROUNDS = 15;
const dataPath = process.argv[2] ?? '../shared/data/multihop/dev.jsonl';

const chinese = [
  '项目A 的负责人属于哪个部门？',
  '对比 北京办公室 和 上海办公室 的年假政策',
  '报销流程需要几天？',
  '数据平台的负责人是谁，他属于哪个团队？',
];
const questions = [
  ...readFileSync(dataPath, 'utf8')
    .split('\n')
    .filter((line) => line.trim())
    .map((line) => (JSON.parse(line) as { question: string }).question),
  ...chinese,
];

const TRIVIAL = /\b(compare|versus|vs)\b|对比|比较|分别|\?.*\?/i;
const analyzer = createAnalyzer();
const deadline = { deadlineUnixMs: Date.now() + 3_600_000 };

type Variant = 'baseline' | 'rules' | 'analyzer';
const samples: Record<Variant, number[]> = { baseline: [], rules: [], analyzer: [] };
let sink = 0;

async function timeOnce(variant: Variant, question: string): Promise<number> {
  const started = process.hrtime.bigint();
  if (variant === 'baseline') sink += TRIVIAL.test(question) ? 1 : 0;
  else if (variant === 'rules') sink += analyzeByRules(question).complexity;
  else sink += (await analyzer.analyze(question, deadline)).complexity;
  return Number(process.hrtime.bigint() - started) / 1e6;
}

for (let round = 0; round < WARMUP_ROUNDS + ROUNDS; round += 1) {
  for (const question of questions) {
    for (const variant of ['baseline', 'rules', 'analyzer'] as const) {
      const ms = await timeOnce(variant, question);
      if (round >= WARMUP_ROUNDS) samples[variant].push(ms);
    }
  }
}

function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;
}

const figures = Object.fromEntries(
  (Object.keys(samples) as Variant[]).map((variant) => [
    variant,
    {
      p50Ms: percentile(samples[variant], 50),
      p99Ms: percentile(samples[variant], 99),
      maxMs: Math.max(...samples[variant]),
      n: samples[variant].length,
    },
  ]),
) as Record<Variant, { p50Ms: number; p99Ms: number; maxMs: number; n: number }>;

const µs = (ms: number) => (ms * 1000).toFixed(1);
const ratio = (a: number, b: number) => (a / b).toFixed(1);
const report = [
  '# Query understanding: rule analysis per question',
  '',
  `Command: \`node --conditions=@hopline/source --import tsx bench/reasoning.ts\``,
  '',
  `Machine: ${machineDescription()}. ` +
    `Load average (1, 5, 15 min): ${loadavg()
      .map((value) => value.toFixed(1))
      .join(', ')}.`,
  `${questions.length} questions (${questions.length - chinese.length} from the multi-hop dev set, ${chinese.length} Chinese), ` +
    `${ROUNDS} timed rounds after ${WARMUP_ROUNDS} warm-up rounds, variants interleaved per question.`,
  '',
  '| variant | p50 µs | p99 µs | max µs | n |',
  '| --- | ---: | ---: | ---: | ---: |',
  ...(Object.keys(figures) as Variant[]).map((variant) => {
    const f = figures[variant];
    return `| ${variant} | ${µs(f.p50Ms)} | ${µs(f.p99Ms)} | ${µs(f.maxMs)} | ${f.n} |`;
  }),
  '',
  '| ratio | p50 | p99 |',
  '| --- | ---: | ---: |',
  `| rules / baseline (one regex test) | ${ratio(figures.rules.p50Ms, figures.baseline.p50Ms)} | ${ratio(figures.rules.p99Ms, figures.baseline.p99Ms)} |`,
  `| analyzer / baseline | ${ratio(figures.analyzer.p50Ms, figures.baseline.p50Ms)} | ${ratio(figures.analyzer.p99Ms, figures.baseline.p99Ms)} |`,
  '',
  `The rules take ${µs(figures.rules.p50Ms)} µs at p50 and ${µs(figures.rules.p99Ms)} µs at p99 per question: ` +
    `${(1 / figures.rules.p99Ms).toFixed(0)} times under a millisecond at p99. A single regex test is the floor; ` +
    'the ratio is what running every rule signal, the route, complexity and sub-question plan costs over it.',
  '',
];
writeFileSync(new URL('results/reasoning.md', import.meta.url), report.join('\n'));
writeFileSync(
  new URL('results/reasoning.json', import.meta.url),
  `${JSON.stringify({ questions: questions.length, rounds: ROUNDS, figures, sink }, null, 2)}\n`,
);
console.log(report.join('\n'));
