import { ValidationError } from '@hopline/contracts';
import { context, ROOT_CONTEXT } from '@opentelemetry/api';
import { subjectMatches } from '../subjects.js';

/** A message as it crosses the in-memory broker: headers already in their wire encoding. */
export interface WireMessage {
  readonly subject: string;
  readonly reply?: string;
  readonly data: Uint8Array;
  readonly headers: Uint8Array;
}

// nats-server's default max_payload.
export const DEFAULT_MAX_PAYLOAD = 1024 * 1024;

/**
 * One subscription inside the broker. Deliveries are queued asynchronously, as a NATS client
 * receives them on a later tick, and run in the root context, as a socket callback would.
 */
export class Route {
  private pending = 0;
  private closed = false;
  private draining = false;
  private readonly idleWaiters: Array<() => void> = [];

  constructor(
    readonly pattern: string,
    readonly queue: string | undefined,
    private readonly deliver: (message: WireMessage) => void,
  ) {}

  get accepting(): boolean {
    return !this.closed && !this.draining;
  }

  enqueue(message: WireMessage): void {
    this.pending++;
    setImmediate(() => {
      this.pending--;
      if (!this.closed) context.with(ROOT_CONTEXT, () => this.deliver(message));
      if (this.pending === 0) this.idleWaiters.splice(0).forEach((wake) => wake());
    });
  }

  /** Drops whatever is still queued. */
  close(): void {
    this.closed = true;
  }

  /** Takes no new messages and resolves once the queued ones were handed to the subscriber. */
  async drain(): Promise<void> {
    this.draining = true;
    if (this.pending > 0) await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
    this.closed = true;
  }
}

/**
 * The in-process stand-in for a NATS server: subject matching with wildcards, queue groups
 * that hand each message to one member (round robin), the max payload limit, and a copy of
 * the payload for every receiver so that no two parties share memory.
 */
export class Broker {
  private readonly routes = new Set<Route>();
  private readonly queueTurns = new Map<string, number>();

  constructor(readonly maxPayload: number) {}

  add(route: Route): () => void {
    this.routes.add(route);
    return () => this.routes.delete(route);
  }

  /** Delivers to every matching subscriber and to one member per queue group; returns how many received it. */
  publish(message: WireMessage): number {
    const size = message.data.byteLength + message.headers.byteLength;
    if (size > this.maxPayload) {
      throw new ValidationError(
        `publish ${message.subject}: message of ${size} bytes exceeds the server's max payload of ${this.maxPayload} bytes`,
      );
    }
    const receivers: Route[] = [];
    const groups = new Map<string, Route[]>();
    for (const route of this.routes) {
      if (!route.accepting || !subjectMatches(route.pattern, message.subject)) continue;
      if (route.queue === undefined) {
        receivers.push(route);
      } else {
        const key = `${route.pattern} ${route.queue}`;
        groups.set(key, [...(groups.get(key) ?? []), route]);
      }
    }
    for (const [key, members] of groups) {
      const turn = this.queueTurns.get(key) ?? 0;
      this.queueTurns.set(key, turn + 1);
      const chosen = members[turn % members.length];
      if (chosen) receivers.push(chosen);
    }
    for (const route of receivers) {
      route.enqueue({ ...message, data: new Uint8Array(message.data) });
    }
    return receivers.length;
  }
}
