import type { ServerResponse } from 'node:http';

/**
 * The HTTP responses an instance has in flight, for its shutdown: whether a connection may be
 * closed at once, and when every request received has been answered.
 */
export class ResponsesInFlight {
  private readonly responses = new Set<ServerResponse>();
  private readonly closeListeners = new Set<() => void>();

  /** Counts `response` until it closes: sent, or its connection lost. */
  track(response: ServerResponse): void {
    this.responses.add(response);
    response.once('close', () => {
      this.responses.delete(response);
      for (const listener of this.closeListeners) listener();
    });
  }

  get none(): boolean {
    return this.responses.size === 0;
  }

  /** Calls `listener` after each response closes. */
  onClose(listener: () => void): void {
    this.closeListeners.add(listener);
  }

  /**
   * Resolves true once every request received has begun its answer, false if `timeoutMs` passes
   * first. What is waited for is an upload or a kb write still reading its body or doing its
   * work; an event stream has begun its answer, and ends with its question.
   */
  whenAnswered(timeoutMs: number): Promise<boolean> {
    if (this.allAnswered()) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.closeListeners.delete(check);
        resolve(false);
      }, timeoutMs);
      // Checked as responses close: an upload or a kb write closes as soon as its answer is sent.
      // A stream that began after the wait did is waited for until it ends, with its question.
      const check = () => {
        if (!this.allAnswered()) return;
        this.closeListeners.delete(check);
        clearTimeout(timer);
        resolve(true);
      };
      this.closeListeners.add(check);
    });
  }

  private allAnswered(): boolean {
    return [...this.responses].every((response) => response.headersSent);
  }
}
