import type { IncomingMessage } from 'node:http';

/**
 * Bounds how long a request's body may make no progress while the gateway waits for it: the
 * time between two reads, as nginx's `client_body_timeout` does, not the whole request, since a
 * streamed NDJSON or multipart upload may rightly take longer than any such bound. Time the
 * gateway itself holds the body back (bytes read and not yet taken, while it publishes or
 * parses) is no stall. One sweep checks every request still reading its body.
 */
export class BodyProgressGuard {
  private readonly reading = new Map<IncomingMessage, { bytesRead: number; progressAt: number }>();
  private readonly sweep: NodeJS.Timeout;

  constructor(
    private readonly stallMs: number,
    private readonly onStall: (request: IncomingMessage) => void,
  ) {
    this.sweep = setInterval(() => this.check(Date.now()), Math.max(50, Math.min(1_000, stallMs / 3)));
    this.sweep.unref();
  }

  watch(request: IncomingMessage): void {
    if (!request.complete) this.reading.set(request, { bytesRead: request.socket.bytesRead, progressAt: Date.now() });
  }

  stop(): void {
    clearInterval(this.sweep);
    this.reading.clear();
  }

  private check(now: number): void {
    for (const [request, progress] of this.reading) {
      if (request.complete || request.destroyed) {
        this.reading.delete(request);
        continue;
      }
      const { bytesRead } = request.socket;
      if (bytesRead !== progress.bytesRead || request.readableLength > 0) {
        progress.bytesRead = bytesRead;
        progress.progressAt = now;
      } else if (now - progress.progressAt >= this.stallMs) {
        this.reading.delete(request);
        this.onStall(request);
      }
    }
  }
}
