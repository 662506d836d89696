/**
 * Keeps the `limit` best-scoring items seen so far in a binary min-heap, so selecting the top k
 * of n candidates costs O(n log k) and never sorts the whole candidate set.
 */
export class TopK<T> {
  private readonly scores: number[] = [];
  private readonly items: T[] = [];

  constructor(readonly limit: number) {}

  /** The score an item must beat to enter; -Infinity until the heap is full. */
  get threshold(): number {
    return this.scores.length < this.limit ? Number.NEGATIVE_INFINITY : (this.scores[0] ?? Number.NEGATIVE_INFINITY);
  }

  push(score: number, item: T): void {
    if (this.limit <= 0) return;
    if (this.scores.length < this.limit) {
      this.scores.push(score);
      this.items.push(item);
      this.siftUp(this.scores.length - 1);
      return;
    }
    if (score <= (this.scores[0] ?? Number.NEGATIVE_INFINITY)) return;
    this.scores[0] = score;
    this.items[0] = item;
    this.siftDown(0);
  }

  /** Best first; ties keep no particular order. */
  drain(): Array<{ score: number; item: T }> {
    const out = this.scores.map((score, index) => ({ score, item: this.items[index] as T }));
    out.sort((a, b) => b.score - a.score);
    this.scores.length = 0;
    this.items.length = 0;
    return out;
  }

  private siftUp(index: number): void {
    let child = index;
    while (child > 0) {
      const parent = (child - 1) >> 1;
      if ((this.scores[parent] as number) <= (this.scores[child] as number)) return;
      this.swap(parent, child);
      child = parent;
    }
  }

  private siftDown(index: number): void {
    const size = this.scores.length;
    let parent = index;
    for (;;) {
      const left = parent * 2 + 1;
      const right = left + 1;
      let smallest = parent;
      if (left < size && (this.scores[left] as number) < (this.scores[smallest] as number)) smallest = left;
      if (right < size && (this.scores[right] as number) < (this.scores[smallest] as number)) smallest = right;
      if (smallest === parent) return;
      this.swap(parent, smallest);
      parent = smallest;
    }
  }

  private swap(a: number, b: number): void {
    const score = this.scores[a] as number;
    this.scores[a] = this.scores[b] as number;
    this.scores[b] = score;
    const item = this.items[a] as T;
    this.items[a] = this.items[b] as T;
    this.items[b] = item;
  }
}
