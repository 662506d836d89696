import type { GroupSummary, SystemSummary } from './metrics/summary.js';
import type { SystemName } from './outcome.js';
import { SYSTEMS } from './outcome.js';
import type { EvalReport } from './run-eval.js';
import { table } from './table.js';
import { formatAblation } from './ablation.js';

const fixed = (value: number, digits = 1) => value.toFixed(digits);

/** The report's rows: each group, then every question not set apart. */
function rowsOf(report: EvalReport): Array<[string, GroupSummary]> {
  return [...Object.entries(report.byGroup), [overallLabel(report), report.overall]];
}

function overallLabel(report: EvalReport): string {
  return report.setApart > 0 ? 'all (not set apart)' : 'all';
}

function systemsIn(report: EvalReport, has: (summary: SystemSummary) => boolean = () => true): SystemName[] {
  return SYSTEMS.filter((system) => {
    const summary = report.overall.systems[system];
    return summary !== undefined && has(summary);
  });
}

function retrievalSection(report: EvalReport): string[] {
  const systems = systemsIn(report);
  const k = report.k;
  const header = ['retrieval', 'n', ...systems.flatMap((system) => [`${system} chain@${k}`, `supp@${k}`, 'MRR'])];
  const rows = rowsOf(report).map(([name, group]) => [
    name,
    String(group.questions),
    ...systems.flatMap((system) => {
      const summary = group.systems[system];
      return summary ? [fixed(summary.chainRecall), fixed(summary.supportRecall), fixed(summary.mrr, 3)] : ['', '', ''];
    }),
  ]);
  return table(header, rows);
}

function answersSection(report: EvalReport): string[] {
  const systems = systemsIn(report, (summary) => summary.answers !== undefined);
  if (systems.length === 0) return [];
  const header = [
    'answers',
    ...systems.flatMap((system) => [
      `${system} EM`,
      'F1',
      'named',
      'which first/last',
      'yes/no right',
      'answered',
      'cites hold',
    ]),
  ];
  const rows = rowsOf(report).map(([name, group]) => [
    name,
    ...systems.flatMap((system) => {
      const answers = group.systems[system]?.answers;
      if (!answers) return ['', '', '', '', '', '', ''];
      const share = ({ questions, right }: { questions: number; right: number }) =>
        questions === 0 ? '-' : `${fixed(right)} of ${questions}`;
      const cites = share({ questions: answers.citationSupport.claims, right: answers.citationSupport.supported });
      return [
        fixed(answers.em),
        fixed(answers.f1),
        share(answers.named),
        share(answers.ordered),
        share(answers.judgements),
        fixed(answers.answered),
        cites,
      ];
    }),
  ]);
  return ['', ...table(header, rows)];
}

function loopSection(report: EvalReport): string[] {
  const loops = rowsOf(report).flatMap(([name, group]) => {
    const loop = group.systems['multi-hop']?.loop;
    return loop ? [[name, loop] as const] : [];
  });
  if (loops.length === 0) return [];
  const depth = Math.max(...loops.map(([, loop]) => loop.perHopRecall.length));
  const hopColumns = Array.from({ length: depth }, (_, index) => `hop ${index + 1}`);
  const header = ['multi-hop loop', 'hops', ...hopColumns, 'break points', 'sub-questions'];
  const rows = loops.map(([name, loop]) => [
    name,
    fixed(loop.avgHops, 2),
    ...hopColumns.map((_, index) => {
      const slot = loop.perHopRecall[index];
      return slot ? fixed(slot.recall) : '';
    }),
    Object.entries(loop.breakPoints)
      .map(([point, count]) => `${point}:${count}`)
      .join(' '),
    loop.subQuestions.questions === 0 ? '-' : `${fixed(loop.subQuestions.coverage)} of ${loop.subQuestions.questions}q`,
  ]);
  const overall = report.overall.systems['multi-hop']?.loop;
  const share = (values: Record<string, number>) =>
    Object.entries(values)
      .map(([name, value]) => `${name} ${value}`)
      .join(', ');
  return [
    '',
    ...table(header, rows),
    'hop n: share of questions with n or more gold documents whose hop n held (MuSiQue: retrieved gold document n;',
    'others: hops 1..n retrieved n gold documents); break points: questions per first hop that did not hold',
    ...(overall ? [`stop reasons (%): ${share(overall.stopReasons)}`, `routes (%): ${share(overall.routes)}`] : []),
  ];
}

function costSection(report: EvalReport): string[] {
  const systems = systemsIn(report);
  const rows = systems.map((system) => {
    const summary = report.overall.systems[system] as SystemSummary;
    return [
      system,
      fixed(summary.latency.p50Ms, 2),
      fixed(summary.latency.p95Ms, 2),
      fixed(summary.latency.meanMs, 2),
      fixed(summary.retrievalCalls, 2),
      fixed(summary.llmCalls, 2),
      String(summary.tokens),
    ];
  });
  return ['', ...table(['per question', 'p50 ms', 'p95 ms', 'mean ms', 'retrievals', 'model calls', 'tokens'], rows)];
}

function abstentionSection(report: EvalReport): string[] {
  const systems = systemsIn(report, (summary) => summary.answers !== undefined).filter((system) =>
    rowsOf(report).some(([, group]) => group.abstention?.[system]),
  );
  if (systems.length === 0) return [];
  const rows = rowsOf(report).map(([name, group]) => [
    name,
    ...systems.flatMap((system) => {
      const figures = group.abstention?.[system];
      return figures ? [String(figures.unanswerable), fixed(figures.recall), fixed(figures.precision)] : ['', '', ''];
    }),
  ]);
  return [
    '',
    ...table(['abstention', ...systems.flatMap((system) => [`${system} unanswerable`, 'recall', 'precision'])], rows),
    'unanswerable: asked over a copy of the corpus without one gold document; precision counts abstentions',
    'on those and on the same questions over the whole corpus',
  ];
}

/** A table for people; `--json` prints the report object instead. */
export function formatReport(report: EvalReport): string {
  return [
    `mode ${report.mode}, k = ${report.k}, embedder ${report.embedder}, ${report.fusion} fusion, ` +
      `weights bm25 ${report.weights.bm25} vector ${report.weights.vector}; corpus of ${report.kb.documents} documents ` +
      `(${report.kb.chunks} chunks) ingested in ${report.kb.ingestMs} ms; ${report.questions} questions`,
    ...retrievalSection(report),
    ...answersSection(report),
    ...loopSection(report),
    ...costSection(report),
    ...abstentionSection(report),
    ...(report.ablation ? formatAblation(report.ablation, report.k, overallLabel(report)) : []),
  ].join('\n');
}
