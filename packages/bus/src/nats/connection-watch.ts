import { BusUnavailableError, type HoplineError } from '@hopline/contracts';
import type { Logger } from '@hopline/telemetry';
import { Events, type NatsConnection } from 'nats';
import type { BusConnection } from '../bus.js';

/**
 * Follows one NATS connection through its status events: it logs each loss, restoration and
 * server error, keeps the current state for health checks, and counts outages, so that a
 * request that timed out across one is reported as the bus's failure.
 */
export class ConnectionWatch {
  private state: BusConnection = { connected: true, sinceUnixMs: Date.now() };
  private outages = 0;
  private readonly restoredListeners = new Set<() => void>();

  constructor(
    private readonly nc: NatsConnection,
    private readonly logger: Pick<Logger, 'info' | 'warn'> | undefined,
  ) {
    logger?.info('connected to NATS', { server: nc.getServer() });
    void this.follow();
    void nc.closed().then((error) => {
      this.state = { connected: false, sinceUnixMs: Date.now(), reason: error ? `closed: ${error.message}` : 'closed' };
    });
  }

  get connection(): BusConnection {
    return this.state;
  }

  /** A mark to hand back to `unavailableIfDown` once the operation failed. */
  get mark(): number {
    return this.outages;
  }

  /**
   * A timeout that overlapped an outage (the connection is down, or went down since `mark`) is
   * the bus's failure: BusUnavailableError, with the real figures. Anything else passes as is.
   */
  unavailableIfDown(error: HoplineError, mark: number, what: string): HoplineError {
    if (error.code !== 'deadline_exceeded' || (this.state.connected && this.outages === mark)) return error;
    const down = this.state.connected
      ? 'the connection to NATS was lost and restored meanwhile'
      : `the connection to NATS is down (${this.state.reason ?? 'disconnected'}) for ${Date.now() - this.state.sinceUnixMs} ms`;
    return new BusUnavailableError(`message bus unavailable: ${what}: ${error.message}; ${down}`, { cause: error });
  }

  /** Calls `listener` each time the connection is restored after a loss, until the returned function is called. */
  onRestored(listener: () => void): () => void {
    this.restoredListeners.add(listener);
    return () => this.restoredListeners.delete(listener);
  }

  private async follow(): Promise<void> {
    for await (const status of this.nc.status()) {
      const server = typeof status.data === 'string' ? status.data : undefined;
      switch (status.type) {
        case Events.Disconnect:
          this.outages += 1;
          this.state = {
            connected: false,
            sinceUnixMs: Date.now(),
            reason: `lost the connection to ${server ?? 'NATS'}`,
          };
          this.logger?.warn('NATS connection lost; reconnecting', { server });
          break;
        case Events.Reconnect:
          this.logger?.info('NATS connection restored', { server, downMs: Date.now() - this.state.sinceUnixMs });
          this.state = { connected: true, sinceUnixMs: Date.now() };
          this.restoredListeners.forEach((listener) => listener());
          break;
        case Events.LDM:
          this.logger?.warn('NATS server is entering lame duck mode; the client will move to another', { server });
          break;
        case Events.Error:
          this.logger?.warn('NATS reported an error', { error: status.data });
          break;
      }
    }
  }
}
