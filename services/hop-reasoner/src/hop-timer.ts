import type { QaEventDraft } from '@hopline/reasoning';
import type { HoplineMetrics } from '@hopline/telemetry';

/**
 * Observes `hopline_hop_duration_seconds` from a question's own events, as they are written: a
 * hop lasts from its `hopStarted` to its `hopAnswer` (retrieve, rerank, grade, extract), by the
 * clock that stamps the events. Branches of a PARALLEL question share hop numbers, so starts
 * wait in order per hop.
 */
export function hopTimer(metrics: Pick<HoplineMetrics, 'hopDuration'>): (event: QaEventDraft) => void {
  const started = new Map<number, number[]>();
  return (event) => {
    if (event.event === 'hopStarted') {
      const hop = event.hopStarted.hop ?? 0;
      started.set(hop, [...(started.get(hop) ?? []), event.atUnixMs]);
    } else if (event.event === 'hopAnswer') {
      const hop = event.hopAnswer.hop ?? 0;
      const [startedAt, ...rest] = started.get(hop) ?? [];
      if (startedAt === undefined) return;
      started.set(hop, rest);
      metrics.hopDuration.observe({ hop: String(hop) }, Math.max(0, event.atUnixMs - startedAt) / 1000);
    }
  };
}
