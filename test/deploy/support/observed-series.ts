import { parse } from 'yaml';
import { analysePromql, withGrafanaVariables } from './promql.js';
import { readRepoFile } from './repo.js';

/** A series an alert or a dashboard panel reads, and the labels it reads it by. */
export interface ObservedSeries {
  metric: string;
  labels: Set<string>;
  /** The alerts and panels that read it. */
  readers: Set<string>;
}

interface PanelLike {
  title?: string;
  targets?: Array<{ expr?: string }>;
  panels?: PanelLike[];
}

/** Every PromQL expression of `deploy/observability`: each alert rule and each dashboard query. */
export function observabilityExpressions(): Array<{ reader: string; expr: string }> {
  const alerts = parse(readRepoFile('deploy/observability/alerts.yaml')) as {
    groups: Array<{ rules: Array<{ alert: string; expr: string }> }>;
  };
  const dashboard = JSON.parse(readRepoFile('deploy/observability/grafana-dashboard.json')) as { panels: PanelLike[] };
  const panels = dashboard.panels.flatMap((panel) => [panel, ...(panel.panels ?? [])]);
  return [
    ...alerts.groups.flatMap((group) =>
      group.rules.map((rule) => ({ reader: `alert ${rule.alert}`, expr: rule.expr })),
    ),
    ...panels.flatMap((panel) =>
      (panel.targets ?? []).flatMap((target) =>
        target.expr ? [{ reader: `panel "${panel.title ?? ''}"`, expr: withGrafanaVariables(target.expr) }] : [],
      ),
    ),
  ];
}

/**
 * The series the alerts and the dashboard read, derived from the two files, with every label
 * they select or group by: what the services must record for those to show anything.
 */
export function observedSeries(): ObservedSeries[] {
  const byMetric = new Map<string, ObservedSeries>();
  const entry = (metric: string, reader: string) => {
    const found = byMetric.get(metric) ?? { metric, labels: new Set<string>(), readers: new Set<string>() };
    found.readers.add(reader);
    byMetric.set(metric, found);
    return found;
  };
  for (const { reader, expr } of observabilityExpressions()) {
    const analysis = analysePromql(expr);
    for (const selector of analysis.selectors) {
      const series = entry(selector.metric, reader);
      for (const matcher of selector.matchers) series.labels.add(matcher.label);
    }
    for (const grouping of analysis.groupings) {
      // A grouping label must be on one of the series inside the aggregation; `le` only on buckets.
      for (const metric of grouping.metrics) {
        for (const label of grouping.labels) {
          if (label !== 'le' || metric.endsWith('_bucket')) entry(metric, reader).labels.add(label);
        }
      }
    }
  }
  return [...byMetric.values()];
}
