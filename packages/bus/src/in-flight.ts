/** Keeps the promises of running handlers, so that a drain can wait for them. */
export class InFlight {
  private readonly running = new Set<Promise<unknown>>();

  track<T>(work: Promise<T>): Promise<T> {
    this.running.add(work);
    const forget = () => this.running.delete(work);
    work.then(forget, forget);
    return work;
  }

  /** Resolves once every tracked handler settled, including those started while waiting. */
  async settled(): Promise<void> {
    while (this.running.size > 0) await Promise.allSettled([...this.running]);
  }
}
