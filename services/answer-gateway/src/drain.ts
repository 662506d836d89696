import { problems } from './problem.js';

/**
 * Whether the gateway still takes new work. From SIGTERM on it drains: a request that would
 * start work (a question, an upload, a kb or document write) is refused with 503 / UNAVAILABLE
 * `shutting-down`, after authentication and before its body is read, so that the client retries
 * on another instance whatever it sent; what serves work already under way (resuming or
 * cancelling a question, reading kbs and traces) goes on while running questions finish.
 */
export class Drain {
  private draining = false;

  /** After this, new work is refused; work under way continues. */
  begin(): void {
    this.draining = true;
  }

  refuseNewWork(): void {
    if (this.draining) throw problems.shuttingDown();
  }
}
