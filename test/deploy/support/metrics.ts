import { jetstream, subjects, subjectTemplate } from '@hopline/contracts';
import { createMetrics } from '@hopline/telemetry';
import { z } from 'zod';

/** Labels Prometheus itself puts on every scraped series (job and instance, plus Kubernetes discovery). */
export const TARGET_LABELS = ['job', 'instance', 'namespace', 'pod'] as const;

/**
 * Every series a Hopline service exports, with its label names: built by calling the real
 * `createMetrics` from @hopline/telemetry, default process metrics included, so that the
 * dashboard and the alerts can only name metrics that exist.
 */
export async function hoplineSeries(): Promise<Map<string, Set<string>>> {
  const metrics = createMetrics('deploy-check');
  const series = new Map<string, Set<string>>();
  const typeOf = new Map(
    (await metrics.registry.getMetricsAsJSON()).map((metric) => [metric.name, String(metric.type)]),
  );
  for (const metric of metrics.registry.getMetricsAsArray()) {
    const { name, labelNames } = z
      .object({ name: z.string(), labelNames: z.array(z.string()).default([]) })
      .parse(metric);
    const labels = new Set(['service', ...labelNames, ...TARGET_LABELS]);
    const type = typeOf.get(name);
    if (type === 'histogram') {
      series.set(`${name}_bucket`, new Set([...labels, 'le']));
      series.set(`${name}_sum`, labels);
      series.set(`${name}_count`, labels);
    } else if (type === 'summary') {
      series.set(name, new Set([...labels, 'quantile']));
      series.set(`${name}_sum`, labels);
      series.set(`${name}_count`, labels);
    } else {
      series.set(name, labels);
    }
  }
  return series;
}

/**
 * The JetStream families of the NATS chart's Prometheus exporter (prometheus-nats-exporter
 * run with -jsz=all, its collector/jsz.go), with their labels. The dead-letter and backlog
 * alerts read them, as no Hopline service counts dead letters itself.
 */
const SERVER_LABELS = ['server_id', 'server_name', 'cluster', 'domain', 'meta_leader', 'is_meta_leader'];
const STREAM_LABELS = [...SERVER_LABELS, 'account', 'account_id', 'stream_name', 'stream_leader', 'is_stream_leader'];
const CONSUMER_LABELS = [
  ...STREAM_LABELS,
  'consumer_name',
  'consumer_leader',
  'is_consumer_leader',
  'consumer_desc',
  'consumer_created',
];
export const NATS_EXPORTER_SERIES = new Map<string, Set<string>>([
  ...['total_messages', 'total_bytes', 'first_seq', 'last_seq', 'consumer_count'].map(
    (family) => [`jetstream_stream_${family}`, new Set([...STREAM_LABELS, ...TARGET_LABELS])] as const,
  ),
  ...[
    'delivered_consumer_seq',
    'delivered_stream_seq',
    'num_ack_pending',
    'num_redelivered',
    'num_waiting',
    'num_pending',
    'ack_floor_stream_seq',
    'ack_floor_consumer_seq',
  ].map((family) => [`jetstream_consumer_${family}`, new Set([...CONSUMER_LABELS, ...TARGET_LABELS])] as const),
]);

/** Values a label may take where Hopline's contracts define them. */
export function contractLabelValues(): Map<string, Set<string>> {
  // Per-question and per-kb subjects appear in labels as their templates.
  const subjectTemplates = Object.values(subjects).map((subject) => {
    if (typeof subject === 'string') return subjectTemplate(subject);
    const concrete = subject as (...tokens: string[]) => string;
    return subjectTemplate(concrete(...Array.from({ length: concrete.length }, (_, index) => `token${index}`)));
  });
  return new Map([
    ['subject', new Set(subjectTemplates)],
    ['stream_name', new Set([jetstream.ingestStream, jetstream.deadLetterStream])],
    ['consumer_name', new Set([jetstream.ingestConsumer])],
  ]);
}
