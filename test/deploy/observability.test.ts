// The alert rules and the Grafana dashboard checked against what the services really export:
// every expression parses with Prometheus's grammar and names only series that createMetrics
// (or the NATS chart's exporter) produces, with labels those series carry.
import { parse } from 'yaml';
import { beforeAll, describe, expect, test } from 'vitest';
import { contractLabelValues, hoplineSeries, NATS_EXPORTER_SERIES } from './support/metrics.js';
import { analysePromql, withGrafanaVariables, type PromqlAnalysis } from './support/promql.js';
import { readRepoFile } from './support/repo.js';
import { z } from 'zod';

const ruleSchema = z
  .object({
    alert: z.string().regex(/^[A-Z][A-Za-z0-9]+$/),
    expr: z.string(),
    for: z
      .string()
      .regex(/^\d+[smhd]$/)
      .optional(),
    labels: z.object({ severity: z.enum(['info', 'warning', 'critical']) }).passthrough(),
    annotations: z
      .object({ summary: z.string().min(1), description: z.string().min(1), runbook_url: z.string() })
      .passthrough(),
  })
  .strict();

const rules = z
  .object({ groups: z.array(z.object({ name: z.string(), rules: z.array(ruleSchema).min(1) }).strict()).min(1) })
  .strict()
  .parse(parse(readRepoFile('deploy/observability/alerts.yaml')))
  .groups.flatMap((group) => group.rules);

interface Panel {
  title?: string;
  type: string;
  datasource?: unknown;
  targets?: { expr: string }[];
  panels?: Panel[];
}
const panelSchema: z.ZodType<Panel> = z.lazy(() =>
  z
    .object({
      title: z.string().optional(),
      type: z.string(),
      datasource: z.unknown().optional(),
      targets: z.array(z.object({ expr: z.string() }).passthrough()).optional(),
      panels: z.array(panelSchema).optional(),
    })
    .passthrough(),
);
const dashboard = z
  .object({
    uid: z.string().min(1),
    title: z.string().min(1),
    panels: z.array(panelSchema).min(1),
    templating: z.object({ list: z.array(z.object({ name: z.string(), type: z.string() }).passthrough()) }),
  })
  .passthrough()
  .parse(JSON.parse(readRepoFile('deploy/observability/grafana-dashboard.json')));
const panels = dashboard.panels.flatMap((panel) => [panel, ...(panel.panels ?? [])]);

let series = new Map<string, Set<string>>();
beforeAll(async () => {
  series = new Map([...(await hoplineSeries()), ...NATS_EXPORTER_SERIES]);
});

/** Every way an expression misreads the metrics: unknown series, labels they lack, values the contracts never produce. */
function problemsOf(source: string, analysis: PromqlAnalysis): string[] {
  const problems = analysis.errors.map((error) => `${source}: ${error}`);
  const contractValues = contractLabelValues();
  for (const { metric, matchers } of analysis.selectors) {
    const labels = series.get(metric);
    if (!labels) {
      problems.push(`${source}: ${metric} is not a series any service or the NATS exporter exports`);
      continue;
    }
    for (const matcher of matchers) {
      if (!labels.has(matcher.label)) problems.push(`${source}: ${metric} has no label ${matcher.label}`);
      const allowed = contractValues.get(matcher.label);
      if (allowed && matcher.op === '=' && !allowed.has(matcher.value)) {
        problems.push(`${source}: ${matcher.label}="${matcher.value}" is none of ${[...allowed].join(', ')}`);
      }
    }
  }
  for (const grouping of analysis.groupings) {
    for (const label of grouping.labels) {
      if (!grouping.metrics.some((metric) => series.get(metric)?.has(label))) {
        problems.push(`${source}: groups by ${label}, which none of ${grouping.metrics.join(', ')} carries`);
      }
    }
  }
  return problems;
}

const readsMetric = (expression: string, metric: string) =>
  analysePromql(expression).selectors.some((selector) => selector.metric === metric);

describe('alerts', () => {
  test('alerts - every rule parses as PromQL and reads only series the services or the NATS exporter export, by labels they carry', () => {
    expect(rules.flatMap((rule) => problemsOf(rule.alert, analysePromql(rule.expr)))).toEqual([]);
  });

  test('alerts - rule names are unique', () => {
    const names = rules.map((rule) => rule.alert);
    expect(names.length).toBe(new Set(names).size);
  });

  test('alerts - cover an open breaker, p95 hop latency, dead-lettered ingests, degraded retrievals, and the model’s errors, p95 latency and budget', () => {
    const covering = (predicate: (expr: string) => boolean) =>
      rules.filter((rule) => predicate(rule.expr)).map((rule) => rule.alert);
    expect(covering((expr) => readsMetric(expr, 'hopline_breaker_state') && /==\s*2\b/.test(expr))).not.toEqual([]);
    expect(
      covering(
        (expr) => readsMetric(expr, 'hopline_hop_duration_seconds_bucket') && /histogram_quantile\(\s*0\.95/.test(expr),
      ),
    ).not.toEqual([]);
    expect(covering((expr) => readsMetric(expr, 'hopline_ingest_dead_letters_total'))).not.toEqual([]);
    expect(covering((expr) => readsMetric(expr, 'hopline_degraded_retrievals_total'))).not.toEqual([]);
    expect(
      covering((expr) => readsMetric(expr, 'hopline_llm_errors_total') && readsMetric(expr, 'hopline_llm_calls_total')),
    ).not.toEqual([]);
    expect(
      covering(
        (expr) =>
          readsMetric(expr, 'hopline_llm_request_duration_seconds_bucket') && /histogram_quantile\(\s*0\.95/.test(expr),
      ),
    ).not.toEqual([]);
    expect(
      covering((expr) => readsMetric(expr, 'hopline_stop_reasons_total') && /reason="budget"/.test(expr)),
    ).not.toEqual([]);
  });

  test('alerts - each links to its own section of docs/operations.md', () => {
    // GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens.
    const anchors = new Set(
      readRepoFile('docs/operations.md')
        .split('\n')
        .filter((line) => /^#{1,6}\s/.test(line))
        .map((line) =>
          line
            .replace(/^#+\s*/, '')
            .trim()
            .toLowerCase()
            .replace(/[^\p{L}\p{N}\s-]/gu, '')
            .replace(/\s/g, '-'),
        ),
    );
    for (const rule of rules) {
      const [path, anchor] = rule.annotations.runbook_url.split('#');
      expect(path, rule.alert).toBe('docs/operations.md');
      expect(anchor, rule.alert).toBe(rule.alert.toLowerCase());
      expect(anchors.has(anchor ?? ''), `${rule.alert}: docs/operations.md has no heading for #${anchor ?? ''}`).toBe(
        true,
      );
    }
  });
});

describe('dashboard', () => {
  test('dashboard - every panel query parses as PromQL and reads only series the services or the NATS exporter export, by labels they carry', () => {
    const queries = panels.flatMap((panel) =>
      (panel.targets ?? []).map((target) => ({ panel: panel.title ?? panel.type, expr: target.expr })),
    );
    expect(queries.length).toBeGreaterThan(0);
    expect(queries.flatMap(({ panel, expr }) => problemsOf(panel, analysePromql(withGrafanaVariables(expr))))).toEqual(
      [],
    );
  });

  test('dashboard - shows hop latency, stop reasons, breakers, degraded retrievals, cache hits, model tokens, latency and errors, and NATS and gRPC traffic', () => {
    const read = new Set(
      panels.flatMap((panel) =>
        (panel.targets ?? []).flatMap((target) =>
          analysePromql(withGrafanaVariables(target.expr)).selectors.map((selector) => selector.metric),
        ),
      ),
    );
    for (const metric of [
      'hopline_hop_duration_seconds_bucket',
      'hopline_stop_reasons_total',
      'hopline_breaker_state',
      'hopline_degraded_retrievals_total',
      'hopline_cache_lookups_total',
      'hopline_llm_tokens_total',
      'hopline_llm_request_duration_seconds_bucket',
      'hopline_llm_errors_total',
      'hopline_nats_requests_total',
      'hopline_grpc_requests_total',
    ]) {
      expect(read, metric).toContain(metric);
    }
  });

  test('dashboard - queries go through the datasource variable, so it imports into any Grafana', () => {
    expect(
      dashboard.templating.list.some((variable) => variable.name === 'datasource' && variable.type === 'datasource'),
    ).toBe(true);
    const datasources = JSON.stringify(panels.map((panel) => panel.datasource).filter(Boolean));
    expect(datasources).not.toMatch(/"uid":"(?!\$\{datasource\})/);
  });
});
