import { Counter, Gauge, type Registry } from 'prom-client';

/** The gateway's own instruments, beside the shared ones of @hopline/telemetry. */
export interface GatewayMetrics {
  /** `reason` is rate (the key's token bucket) or in_flight (the instance's bound). */
  readonly admissionRejections: Counter<'reason'>;
  /** Streams that continued a question after a reconnect, by transport. */
  readonly resumes: Counter<'transport'>;
  /** Questions the gateway ended itself, by CancelReason. */
  readonly cancellations: Counter<'reason'>;
}

export function createGatewayMetrics(registry: Registry, inFlight: () => number): GatewayMetrics {
  const registers = [registry];
  new Gauge({
    name: 'hopline_gateway_questions_in_flight',
    help: 'Questions this gateway instance is running',
    registers,
    collect() {
      this.set(inFlight());
    },
  });
  return {
    admissionRejections: new Counter({
      name: 'hopline_gateway_admission_rejections_total',
      help: 'Questions refused with 429, by reason',
      labelNames: ['reason'],
      registers,
    }),
    resumes: new Counter({
      name: 'hopline_gateway_stream_resumes_total',
      help: 'Streams that resumed a question after a reconnect, by transport',
      labelNames: ['transport'],
      registers,
    }),
    cancellations: new Counter({
      name: 'hopline_gateway_cancellations_total',
      help: 'Questions the gateway cancelled, by reason',
      labelNames: ['reason'],
      registers,
    }),
  };
}
