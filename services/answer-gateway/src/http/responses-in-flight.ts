import type { ServerResponse } from 'node:http';
import { waitUntil } from '../wait-until.js';

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
    // Checked as responses close: an upload or a kb write closes as soon as its answer is sent.
    // A stream that began after the wait did is waited for until it ends, with its question.
    return waitUntil(() => this.allAnswered(), this.closeListeners, timeoutMs);
  }

  private allAnswered(): boolean {
    return [...this.responses].every((response) => response.headersSent);
  }
}
