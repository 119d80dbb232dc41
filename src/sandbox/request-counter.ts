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

/** Answers by HTTP status, and when the first and the last were sent (`Date.now()`), for throttling figures. */
export interface AnswerCounts {
  byStatus: Record<string, number>;
  firstAt: number | null;
  lastAt: number | null;
}

/** API answers by status (429s included), counted when each answer is sent; counts, like the others. */
export class AnswerTally {
  private byStatus = new Map<number, number>();
  private firstAt: number | null = null;
  private lastAt: number | null = null;

  record(status: number, at = Date.now()): void {
    this.byStatus.set(status, (this.byStatus.get(status) ?? 0) + 1);
    this.firstAt ??= at;
    this.lastAt = at;
  }

  counts(): AnswerCounts {
    return {
      byStatus: Object.fromEntries([...this.byStatus].map(([status, n]) => [String(status), n])),
      firstAt: this.firstAt,
      lastAt: this.lastAt,
    };
  }

  reset(): void {
    this.byStatus.clear();
    this.firstAt = null;
    this.lastAt = null;
  }
}
