import type { ServerResponse } from 'node:http';
import type { RenderedEvent } from '../event-json.js';

export interface SseOptions {
  /** A comment line is written when the stream was idle this long. */
  heartbeatMs: number;
  /** Sent once as `retry:`: how long a browser's EventSource waits before reconnecting. */
  retryMs: number;
  /**
   * How long a write may wait for the client to take what was sent before the connection is
   * closed: a client that stopped reading would otherwise hold it, and the question's events
   * with it, for good. It may resume with Last-Event-ID.
   */
  stallMs: number;
  headers?: Record<string, string>;
}

/** The quality an Accept header gives a media type, by its own range only: 0 when not listed. */
function qualityOf(accept: string, type: string): number {
  let quality = 0;
  for (const range of accept.split(',')) {
    const [name = '', ...params] = range.split(';').map((part) => part.trim().toLowerCase());
    if (name !== type) continue;
    const q = params.find((param) => param.startsWith('q='));
    quality = Math.max(quality, q === undefined ? 1 : Number(q.slice(2)) || 0);
  }
  return quality;
}

/**
 * Whether a client asks for the event stream: it lists text/event-stream as acceptable (q above
 * 0) and ranks it no lower than application/json. "text/event-stream;q=0" refuses it.
 */
export function acceptsEventStream(accept: string | undefined): boolean {
  if (accept === undefined) return false;
  const stream = qualityOf(accept, 'text/event-stream');
  return stream > 0 && stream >= qualityOf(accept, 'application/json');
}

/** Writes Server-Sent Events, with comment heartbeats on idle streams so proxies keep them open. */
export class SseWriter {
  private readonly heartbeat: NodeJS.Timeout;

  constructor(
    private readonly response: ServerResponse,
    private readonly options: SseOptions,
  ) {
    response.writeHead(200, {
      ...options.headers,
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-cache, no-transform',
      Connection: 'keep-alive',
      'X-Accel-Buffering': 'no',
    });
    response.write(`retry: ${options.retryMs}\n\n`);
    this.heartbeat = setInterval(() => {
      // A stream the client is behind on is not idle: nothing is added to what it has not taken.
      if (!response.destroyed && !response.writableNeedDrain) response.write(': heartbeat\n\n');
    }, options.heartbeatMs);
    this.heartbeat.unref();
  }

  /** Resolves once the event is handed to the socket, waiting for drain under backpressure. */
  async send(event: RenderedEvent): Promise<void> {
    if (this.response.destroyed) return;
    // Any write shows the stream is alive: the next heartbeat is due an idle period from now.
    this.heartbeat.refresh();
    const frame = `id: ${event.id}\nevent: ${event.name}\ndata: ${JSON.stringify(event.data)}\n\n`;
    if (!this.response.write(frame)) {
      await new Promise<void>((resolve) => {
        const stalled = setTimeout(() => this.response.destroy(), this.options.stallMs);
        const done = () => {
          clearTimeout(stalled);
          this.response.off('drain', done);
          this.response.off('close', done);
          resolve();
        };
        this.response.once('drain', done);
        this.response.once('close', done);
      });
    }
  }

  end(): void {
    clearInterval(this.heartbeat);
    if (!this.response.destroyed) this.response.end();
  }
}
