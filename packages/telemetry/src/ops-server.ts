import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import type { Logger } from './logger.js';

export interface HealthReport {
  ok: boolean;
  details: Record<string, unknown>;
}

export interface OpsServerOptions {
  /** 0 picks a free port. */
  port: number;
  /**
   * Where it listens: the service's own bind host (a service on loopback keeps its ops port on
   * loopback too), or METRICS_HOST. Default 0.0.0.0, for services without a port of their own,
   * so that an orchestrator's probes reach it.
   */
  host?: string;
  registry: Registry;
  /** Readiness: whether the service can do its work now (its bus, its index, its breakers). */
  health: () => Promise<HealthReport>;
  logger?: Pick<Logger, 'warn'>;
}

export interface OpsServer {
  readonly port: number;
  close(): Promise<void>;
}

function send(response: ServerResponse, status: number, contentType: string, body: string): void {
  response.writeHead(status, { 'content-type': contentType, 'cache-control': 'no-store' });
  response.end(body);
}

const ROUTES = new Set(['/metrics', '/livez', '/readyz', '/healthz']);

/**
 * The operator's port of a service: `GET /metrics` (Prometheus text); `GET /livez`, 200 while
 * the process answers at all (a liveness probe restarts only a wedged process, never one
 * waiting for NATS); `GET /readyz`, 200 when ready and 503 with the details otherwise (the bus
 * down, the index catching up); `/healthz` is `/readyz` under its older name. Kept apart from
 * the service's own ports so that probes and scrapes never queue behind traffic.
 */
export async function startOpsServer(options: OpsServerOptions): Promise<OpsServer> {
  const handle = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const path = (request.url ?? '/').split('?')[0] ?? '/';
    if (!ROUTES.has(path)) {
      send(response, 404, 'application/json', JSON.stringify({ error: `no route ${path}` }));
      return;
    }
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      response.setHeader('allow', 'GET, HEAD');
      send(response, 405, 'application/json', JSON.stringify({ error: `${request.method} is not allowed on ${path}` }));
      return;
    }
    if (path === '/metrics') {
      send(response, 200, options.registry.contentType, await options.registry.metrics());
      return;
    }
    if (path === '/livez') {
      send(response, 200, 'application/json', JSON.stringify({ ok: true }));
      return;
    }
    let report: HealthReport;
    try {
      report = await options.health();
    } catch (error) {
      report = { ok: false, details: { error: error instanceof Error ? error.message : String(error) } };
    }
    send(response, report.ok ? 200 : 503, 'application/json', JSON.stringify(report));
  };

  const server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      options.logger?.warn('ops request failed', { error, path: request.url });
      if (!response.headersSent) send(response, 500, 'application/json', JSON.stringify({ error: 'internal error' }));
      else response.destroy();
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host ?? '0.0.0.0', () => {
      server.off('error', reject);
      resolve();
    });
  });

  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        // Scrapers keep connections alive; they must not hold a stopping service open.
        server.closeAllConnections();
      }),
  };
}
