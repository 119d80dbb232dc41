/**
 * Values asked for at most once per `ttlMs` per key, shared while under way; a failed one is asked again by the
 * next call. Whoever holds the memo bounds it: its keys are what one owner asks about.
 */
export class TimedMemo<T> {
  private readonly entries = new Map<string, { at: number; value: Promise<T> }>();

  constructor(private readonly ttlMs: number) {}

  get(key: string, make: () => Promise<T>): Promise<T> {
    const known = this.entries.get(key);
    if (known && Date.now() - known.at < this.ttlMs) return known.value;
    const value = make();
    this.entries.set(key, { at: Date.now(), value });
    value.catch(() => this.entries.delete(key));
    return value;
  }

  forget(key: string): void {
    this.entries.delete(key);
  }
}
