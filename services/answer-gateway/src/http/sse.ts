import type { ServerResponse } from 'node:http';
import type { RenderedEvent } from '../event-json.js';

export interface SseOptions {
  /** A comment line is written when the stream was idle this long. */
  heartbeatMs: number;
  /** Sent once as `retry:`: how long a browser's EventSource waits before reconnecting. */
  retryMs: number;
  headers?: Record<string, string>;
}

/** Writes Server-Sent Events, with comment heartbeats on idle streams so proxies keep them open. */
export class SseWriter {
  private readonly heartbeat: NodeJS.Timeout;

  constructor(
    private readonly response: ServerResponse,
    options: SseOptions,
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
      if (!response.destroyed) response.write(': heartbeat\n\n');
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
        const done = () => {
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
