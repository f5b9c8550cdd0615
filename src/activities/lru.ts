/**
 * A small least-recently-used map for per-worker caches, bounded by entry count and,
 * optionally, by a total weight (e.g. bytes). Entries whose weight changes after they were
 * stored are set again to be re-weighed.
 */
export class Lru<V> {
  private readonly map = new Map<string, { value: V; weight: number }>();
  private total = 0;

  constructor(
    private readonly max: number,
    private readonly weight?: { of: (value: V) => number; max: number },
  ) {}

  get(key: string): V | undefined {
    const entry = this.map.get(key);
    if (entry === undefined) return undefined;
    this.map.delete(key);
    this.map.set(key, entry);
    return entry.value;
  }

  set(key: string, value: V): void {
    this.delete(key);
    const weight = this.weight ? this.weight.of(value) : 0;
    this.map.set(key, { value, weight });
    this.total += weight;
    // The newest entry stays even when it alone outweighs the bound: it is in use.
    while (this.map.size > 1 && (this.map.size > this.max || (this.weight !== undefined && this.total > this.weight.max))) {
      this.delete(this.map.keys().next().value as string);
    }
  }

  delete(key: string): void {
    const entry = this.map.get(key);
    if (entry === undefined) return;
    this.total -= entry.weight;
    this.map.delete(key);
  }

  get size(): number {
    return this.map.size;
  }

  /** Sum of the entries' weights (0 without a weight bound). */
  get totalWeight(): number {
    return this.total;
  }
}
