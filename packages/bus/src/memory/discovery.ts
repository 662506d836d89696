import { ServiceResponseType, ServiceVerb } from 'nats';
import type { ServiceDefinition } from '../bus.js';

/** Per-endpoint counters, in the shape of $SRV.STATS. */
export class EndpointStats {
  private requests = 0;
  private errors = 0;
  private lastError = '';
  private processingNanos = 0;

  constructor(
    readonly name: string,
    readonly subject: string,
    readonly queue: string,
  ) {}

  record(startedAt: bigint, error: string | undefined): void {
    this.requests++;
    this.processingNanos += Number(process.hrtime.bigint() - startedAt);
    if (error !== undefined) {
      this.errors++;
      this.lastError = error;
    }
  }

  toJSON() {
    return {
      name: this.name,
      subject: this.subject,
      queue_group: this.queue,
      num_requests: this.requests,
      num_errors: this.errors,
      last_error: this.lastError,
      processing_time: this.processingNanos,
      average_processing_time: this.requests === 0 ? 0 : Math.round(this.processingNanos / this.requests),
    };
  }
}

export interface ServiceIdentity {
  readonly definition: ServiceDefinition;
  readonly id: string;
  readonly started: string;
  readonly endpoints: readonly EndpointStats[];
}

/** The subjects a NATS micro-service answers for one verb: all services, this name, this instance. */
export function discoverySubjects(verb: ServiceVerb, name: string, id: string): string[] {
  return [`$SRV.${verb}`, `$SRV.${verb}.${name}`, `$SRV.${verb}.${name}.${id}`];
}

/** The JSON a nats.js service sends for each discovery verb. */
export function discoveryAnswer(verb: ServiceVerb, service: ServiceIdentity): unknown {
  const { name, version, description } = service.definition;
  switch (verb) {
    case ServiceVerb.PING:
      return { type: ServiceResponseType.PING, name, id: service.id, version };
    case ServiceVerb.INFO:
      return {
        type: ServiceResponseType.INFO,
        name,
        id: service.id,
        version,
        description: description ?? '',
        endpoints: service.endpoints.map((endpoint) => ({
          name: endpoint.name,
          subject: endpoint.subject,
          queue_group: endpoint.queue,
        })),
      };
    case ServiceVerb.STATS:
      return {
        type: ServiceResponseType.STATS,
        name,
        id: service.id,
        version,
        started: service.started,
        endpoints: service.endpoints.map((endpoint) => endpoint.toJSON()),
      };
  }
}

export const DISCOVERY_VERBS: readonly ServiceVerb[] = [ServiceVerb.PING, ServiceVerb.INFO, ServiceVerb.STATS];
