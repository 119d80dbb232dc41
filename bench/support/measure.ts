/**
 * Small measuring tools shared by the benches: order statistics, a memory sampler and markdown output.
 */

/** Nearest-rank percentile (p in 0..100) of unsorted values; NaN when there are none. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))]!;
}

/** The middle value, or the mean of the two middle values; NaN when there are none. */
export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export interface MemoryPeak {
  /** Resident set size when sampling started, bytes. */
  startRss: number;
  peakRss: number;
  startHeapUsed: number;
  /** V8 heap in use, garbage included: it depends on when the collector last ran. */
  peakHeapUsed: number;
  /** V8 heap still in use right after a full collection (needs `--expose-gc`; null without it). */
  peakLiveHeap: number | null;
}

/**
 * Samples this process's RSS and V8 heap on an interval (unref'd, so it never keeps a process alive). RSS and
 * heap in use both include garbage the collector has not yet reclaimed, so they say as much about V8's
 * heuristics as about the program; when the process runs with `--expose-gc`, every `liveEveryMs` a full
 * collection is forced and the heap that survives it, the live set, is sampled too. (A forced full
 * collection of a heap this size takes tens of milliseconds: about 1% of the time at one per 5 s.)
 */
export class MemorySampler {
  private timers: NodeJS.Timeout[] = [];
  private peak: MemoryPeak;

  constructor(
    private readonly intervalMs = 100,
    private readonly liveEveryMs = 5_000,
  ) {
    const m = process.memoryUsage();
    this.peak = {
      startRss: m.rss,
      peakRss: m.rss,
      startHeapUsed: m.heapUsed,
      peakHeapUsed: m.heapUsed,
      peakLiveHeap: null,
    };
  }

  start(): void {
    this.timers.push(setInterval(() => this.sample(), this.intervalMs));
    if (typeof globalThis.gc === 'function') {
      this.sampleLive();
      this.timers.push(setInterval(() => this.sampleLive(), this.liveEveryMs));
    }
    for (const t of this.timers) t.unref();
  }

  stop(): MemoryPeak {
    for (const t of this.timers) clearInterval(t);
    this.sample();
    if (typeof globalThis.gc === 'function') this.sampleLive();
    return { ...this.peak };
  }

  private sample(): void {
    const m = process.memoryUsage();
    this.peak.peakRss = Math.max(this.peak.peakRss, m.rss);
    this.peak.peakHeapUsed = Math.max(this.peak.peakHeapUsed, m.heapUsed);
  }

  private sampleLive(): void {
    globalThis.gc?.();
    const live = process.memoryUsage().heapUsed;
    this.peak.peakLiveHeap = Math.max(this.peak.peakLiveHeap ?? 0, live);
  }
}

export function mb(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(0)} MB`;
}

export function fixed(value: number, digits = 2): string {
  return Number.isFinite(value) ? value.toFixed(digits) : 'n/a';
}

export function share(value: number, digits = 1): string {
  return Number.isFinite(value) ? `${(value * 100).toFixed(digits)}%` : 'n/a';
}

export function count(value: number): string {
  return value.toLocaleString('en-US');
}

export function markdownTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const line = (cells: readonly string[]) => `| ${cells.map((c) => c.replace(/\|/g, '\\|')).join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}

/** Polls `probe` every `everyMs` until it returns a value, or throws after `timeoutMs`. */
export async function pollUntil<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  timeoutMs: number,
  everyMs = 200,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new BenchTimeoutError(what, timeoutMs);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

export class BenchTimeoutError extends Error {
  readonly code = 'BENCH_TIMEOUT';
  constructor(
    readonly what: string,
    readonly timeoutMs: number,
  ) {
    super(`gave up waiting for ${what} after ${Math.round(timeoutMs / 1000)} s`);
    this.name = 'BenchTimeoutError';
  }
}
