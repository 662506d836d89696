import type { Bus } from './bus.js';

/** The bus's part of a service's /healthz: unhealthy while the connection is down, saying why and for how long. */
export function busHealth(bus: Bus, now: number = Date.now()): { ok: boolean; details: Record<string, unknown> } {
  const connection = bus.connection();
  if (connection.connected) return { ok: true, details: { kind: bus.kind, connected: true } };
  return {
    ok: false,
    details: {
      kind: bus.kind,
      connected: false,
      reason: connection.reason ?? 'disconnected',
      downForMs: now - connection.sinceUnixMs,
    },
  };
}
