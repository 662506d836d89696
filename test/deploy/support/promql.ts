import { parser } from '@prometheus-io/lezer-promql';

type SyntaxNode = ReturnType<typeof parser.parse>['topNode'];

export interface LabelMatcher {
  label: string;
  op: string;
  value: string;
}

export interface Selector {
  metric: string;
  matchers: LabelMatcher[];
}

export interface Grouping {
  /** Labels named in `by (...)` or `without (...)`. */
  labels: string[];
  /** Metrics of the selectors inside the aggregation. */
  metrics: string[];
}

export interface PromqlAnalysis {
  errors: string[];
  selectors: Selector[];
  groupings: Grouping[];
}

const unquote = (text: string): string => {
  if (text.startsWith('`')) return text.slice(1, -1);
  try {
    return JSON.parse(text.startsWith("'") ? `"${text.slice(1, -1).replace(/"/g, '\\"')}"` : text) as string;
  } catch {
    return text.slice(1, -1);
  }
};

function descendants(node: SyntaxNode, name: string): SyntaxNode[] {
  const found: SyntaxNode[] = [];
  const cursor = node.cursor();
  do {
    if (cursor.name === name && cursor.node !== node) found.push(cursor.node);
  } while (cursor.next() && cursor.from < node.to);
  return found.filter((candidate) => candidate.from >= node.from && candidate.to <= node.to);
}

function selectorOf(node: SyntaxNode, text: string): Selector {
  const metric = node.getChild('Identifier');
  const matchers = descendants(node, 'UnquotedLabelMatcher').concat(descendants(node, 'QuotedLabelMatcher'));
  return {
    metric: metric ? text.slice(metric.from, metric.to) : '',
    matchers: matchers.map((matcher) => {
      const label = matcher.getChild('LabelName') ?? matcher.getChild('QuotedLabelName');
      const op = matcher.getChild('MatchOp');
      const value = matcher.getChild('StringLiteral');
      return {
        label: label
          ? label.name === 'QuotedLabelName'
            ? unquote(text.slice(label.from, label.to))
            : text.slice(label.from, label.to)
          : '',
        op: op ? text.slice(op.from, op.to) : '',
        value: value ? unquote(text.slice(value.from, value.to)) : '',
      };
    }),
  };
}

/** Parses a PromQL expression with Prometheus's own grammar and lists what it reads. */
export function analysePromql(expression: string): PromqlAnalysis {
  const tree = parser.parse(expression);
  const errors: string[] = [];
  tree.iterate({
    enter: (node) => {
      if (node.type.isError)
        errors.push(`syntax error at ${node.from}: "${expression.slice(Math.max(0, node.from - 10), node.to + 10)}"`);
    },
  });
  const top = tree.topNode;
  const selectors = descendants(top, 'VectorSelector').map((node) => selectorOf(node, expression));
  const groupings = descendants(top, 'AggregateExpr').flatMap((node) => {
    const modifier = node.getChild('AggregateModifier');
    if (!modifier) return [];
    const labels = descendants(modifier, 'LabelName').map((label) => expression.slice(label.from, label.to));
    const metrics = descendants(node, 'VectorSelector').map((selector) => selectorOf(selector, expression).metric);
    return [{ labels, metrics }];
  });
  if (selectors.length === 0 && errors.length === 0) errors.push('the expression reads no metric');
  return { errors, selectors, groupings };
}

/** Grafana's template variables replaced by values Prometheus would accept. */
export function withGrafanaVariables(expression: string): string {
  return expression
    .replace(/\$__rate_interval|\$__interval|\$__range/g, '5m')
    .replace(/\$\{?[A-Za-z_][A-Za-z0-9_]*\}?/g, '.*');
}
