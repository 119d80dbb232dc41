import type { RouteLabel } from './sandbox-facts.js';

export interface RequestFilter {
  route?: RouteLabel;
  /** The bearer token sent; `null` counts requests that sent none. */
  key?: string | null;
}

/**
 * How many API requests arrived, by route and by key, counted on arrival (before auth, faults and limits),
 * so a test can assert how many reads a client made whatever the answers were. Kept as counts, not a log,
 * so a long benchmark does not grow memory.
 */
export class RequestCounter {
  private readonly counts = new Map<string, { route: RouteLabel; key: string | null; count: number }>();

  record(route: RouteLabel, key: string | null): void {
    const id = `${route}\u0000${key ?? ''}\u0000${key === null ? 'none' : 'key'}`;
    const entry = this.counts.get(id);
    if (entry) entry.count += 1;
    else this.counts.set(id, { route, key, count: 1 });
  }

  count(filter: RequestFilter = {}): number {
    let total = 0;
    for (const entry of this.counts.values()) {
      if (filter.route !== undefined && entry.route !== filter.route) continue;
      if (filter.key !== undefined && entry.key !== filter.key) continue;
      total += entry.count;
    }
    return total;
  }

  reset(): void {
    this.counts.clear();
  }
}

/** Answered report reads per slug (see `ReportSandbox.answeredReads`); counts, like the request counter. */
export class ReadTally {
  private readonly bySlug = new Map<string, number>();

  record(slug: string): void {
    this.bySlug.set(slug, (this.bySlug.get(slug) ?? 0) + 1);
  }

  answered(): Map<string, number> {
    return new Map(this.bySlug);
  }

  reset(): void {
    this.bySlug.clear();
  }
}
