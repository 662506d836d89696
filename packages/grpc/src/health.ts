import * as grpc from '@grpc/grpc-js';
import { service as healthServiceDefinition } from 'grpc-health-check';

export type ServingStatus = 'SERVING' | 'NOT_SERVING';

interface HealthCheckRequest {
  service: string;
}
interface HealthCheckResponse {
  status: ServingStatus | 'SERVICE_UNKNOWN';
}

/**
 * The standard grpc.health.v1.Health service (Check and Watch, the proto from
 * grpc-health-check). Kept here rather than the package's own implementation because a
 * stopping server must be able to end the Watch streams, which would otherwise hold a
 * graceful shutdown open until its grace period runs out.
 */
export class HealthService {
  private readonly statuses = new Map<string, ServingStatus>();
  private readonly watchers = new Map<
    string,
    Set<grpc.ServerWritableStream<HealthCheckRequest, HealthCheckResponse>>
  >();

  setStatus(service: string, status: ServingStatus): void {
    // Watch streams hear of changes only, as the health protocol has it.
    if (this.statuses.get(service) === status) return;
    this.statuses.set(service, status);
    for (const watcher of this.watchers.get(service) ?? []) watcher.write({ status });
  }

  services(): string[] {
    return [...this.statuses.keys()];
  }

  /** Ends every Watch stream with OK, after they have seen the latest status. */
  endWatches(): void {
    for (const watchers of this.watchers.values()) {
      for (const watcher of watchers) watcher.end();
      watchers.clear();
    }
  }

  addToServer(server: grpc.Server): void {
    const check: grpc.handleUnaryCall<HealthCheckRequest, HealthCheckResponse> = (call, callback) => {
      const status = this.statuses.get(call.request.service);
      if (status) callback(null, { status });
      else callback({ code: grpc.status.NOT_FOUND, details: `no health status for service "${call.request.service}"` });
    };
    const watch: grpc.handleServerStreamingCall<HealthCheckRequest, HealthCheckResponse> = (call) => {
      const { service } = call.request;
      const watchers = this.watchers.get(service) ?? new Set();
      this.watchers.set(service, watchers);
      watchers.add(call);
      call.once('cancelled', () => watchers.delete(call));
      call.write({ status: this.statuses.get(service) ?? 'SERVICE_UNKNOWN' });
    };
    const list: grpc.handleUnaryCall<unknown, { statuses: Record<string, { status: ServingStatus }> }> = (
      _call,
      callback,
    ) => {
      callback(null, { statuses: Object.fromEntries([...this.statuses].map(([name, status]) => [name, { status }])) });
    };
    server.addService(
      healthServiceDefinition as grpc.ServiceDefinition,
      { Check: check, Watch: watch, List: list } as grpc.UntypedServiceImplementation,
    );
  }
}
