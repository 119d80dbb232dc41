import type { RedisClient } from '../redis.js';
import type { Keys } from './keys.js';

/**
 * The event-to-CRM latency histogram, kept in Redis: the workers that write the records observe it, and they
 * may run in `worker` processes that serve no `/metrics`; the server reads the totals at each scrape
 * (pipeline/lane-metrics.ts). Totals only grow, as a Prometheus histogram's do.
 */

export type LatencySource = 'report' | 'crm';

/** Upper bounds in seconds: an operator's targets (1 s quiet, 3 s p95 under load, 10 s worst) fall on bounds. */
export const EVENT_TO_CRM_BUCKETS = [0.25, 0.5, 1, 2, 3, 5, 10, 20, 30, 60, 120, 300] as const;

export interface LatencyTotals {
  /** Cumulative count per upper bound, as Prometheus's `le`, `+Inf` last. */
  buckets: { le: string; count: number }[];
  count: number;
  sum: number;
}

export class EventLatencies {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: Keys,
  ) {}

  async record(source: LatencySource, seconds: readonly number[]): Promise<void> {
    if (seconds.length === 0) return;
    const key = this.keys.eventLatency(source);
    const perBucket = new Map<string, number>();
    for (const s of seconds) {
      const bound = EVENT_TO_CRM_BUCKETS.find((b) => s <= b);
      const field = `le:${bound ?? '+Inf'}`;
      perBucket.set(field, (perBucket.get(field) ?? 0) + 1);
    }
    const batch = this.redis.pipeline();
    for (const [field, n] of perBucket) batch.hincrby(key, field, n);
    batch.hincrby(key, 'count', seconds.length);
    batch.hincrbyfloat(
      key,
      'sum',
      seconds.reduce((a, b) => a + b, 0),
    );
    // A lost observation is better than a failed job: the update itself is done (exec reports per command).
    await batch.exec().catch(() => undefined);
  }

  async totals(source: LatencySource): Promise<LatencyTotals> {
    const raw = await this.redis.hgetall(this.keys.eventLatency(source));
    let acc = 0;
    const buckets = EVENT_TO_CRM_BUCKETS.map((b) => {
      acc += Number(raw[`le:${b}`] ?? 0);
      return { le: String(b), count: acc };
    });
    const count = Number(raw.count ?? 0);
    buckets.push({ le: '+Inf', count });
    return { buckets, count, sum: Number(raw.sum ?? 0) };
  }
}
