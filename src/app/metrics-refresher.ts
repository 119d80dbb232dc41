import type { AppContext } from '../app/context.js';
import { installationStatusSchema } from '../installations/store.js';
import { setLaneMetrics } from '../pipeline/lane-metrics.js';
import { setOldestQueuedMetric } from '../pipeline/liveness-watch.js';
import type { QueueName } from '../pipeline/queue-names.js';
import { redisReady, within } from '../redis-availability.js';

/**
 * The gauges `/metrics` takes from Redis (jobs per queue, workers attached, installations by status, the lanes'
 * ages and latency totals) are read by one loop per process every METRICS_REFRESH_MS, never by a request: a flood
 * of scrapes or probes costs Redis nothing, and the loop's reads (one per installation among them, and a scan
 * of Redis's clients for the workers) happen at its pace only. A scrape serves what the last pass read, and
 * `report_connector_redis_metrics_age_seconds` says how old that is.
 */
export const METRICS_REFRESH_MS = 15_000;

/** One pass may take this long before it counts as failed (Redis hung); the next starts on schedule. */
const PASS_TIMEOUT_MS = 10_000;

export interface WorkerReading {
  /** Workers attached per queue, over every process, as the last pass saw them. */
  perQueue: Record<QueueName, number>;
  at: number;
}

export class MetricsRefresher {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private lastOkAt: number | null = null;
  private lastFailed = false;
  private workers: WorkerReading | null = null;

  constructor(
    private readonly ctx: AppContext,
    private readonly intervalMs = METRICS_REFRESH_MS,
  ) {}

  /** Starts the loop (once); its timer does not keep the process alive, and it ends when Redis is closed. */
  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => this.tick(), this.intervalMs);
    this.timer.unref();
    this.tick();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** The last pass's reading of the workers, null before the first pass answered. */
  workerReading(): WorkerReading | null {
    return this.workers;
  }

  /** Whether the values served are current: the last pass answered and both connections are up now. */
  redisUp(): boolean {
    return (
      !this.lastFailed &&
      this.lastOkAt !== null &&
      redisReady(this.ctx.redis) &&
      redisReady(this.ctx.queues.connection)
    );
  }

  /** Seconds since the last pass that answered; null before any. */
  ageSeconds(now = Date.now()): number | null {
    return this.lastOkAt === null ? null : Math.max(0, now - this.lastOkAt) / 1000;
  }

  /** One pass now, unless one is under way (then that one); for the first scrape and for tests. */
  refresh(): Promise<void> {
    this.running ??= this.pass().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  private tick(): void {
    if (this.ctx.redis.status === 'end') {
      this.stop();
      return;
    }
    if (this.running) return;
    // The pass records its own failure (lastFailed, shown as redis_up 0); nothing else is waiting on it.
    void this.refresh();
  }

  private async pass(): Promise<void> {
    const { ctx } = this;
    if (!redisReady(ctx.redis) || !redisReady(ctx.queues.connection)) {
      this.lastFailed = true;
      return;
    }
    try {
      await within(this.read(), PASS_TIMEOUT_MS, 'Redis');
      this.lastOkAt = Date.now();
      this.lastFailed = false;
    } catch (err) {
      this.lastFailed = true;
      ctx.logger.debug({ err }, 'metrics refresh failed; the scrape serves the last values with redis_up 0');
    }
  }

  private async read(): Promise<void> {
    const { ctx } = this;
    const queues = ctx.queues.all();
    const [counts, installations, workerCounts] = await Promise.all([
      ctx.queues.counts(),
      ctx.installations.list(),
      Promise.all(queues.map((q) => q.getWorkersCount())),
    ]);
    for (const [queue, c] of Object.entries(counts)) {
      for (const [state, n] of Object.entries(c)) ctx.metrics.jobs.set({ queue, state }, n);
    }
    const perQueue = Object.fromEntries(queues.map((q, i) => [q.name, workerCounts[i] ?? 0])) as Record<
      QueueName,
      number
    >;
    for (const [queue, n] of Object.entries(perQueue)) ctx.metrics.workers.set({ queue }, n);
    this.workers = { perQueue, at: Date.now() };
    await setLaneMetrics(ctx.metrics, ctx.pipeline, counts, installations);
    await setOldestQueuedMetric(ctx.pipeline);
    // Every status of every CRM is set, zero included, so an alert on a count going up sees it start.
    ctx.metrics.installations.reset();
    for (const crm of new Set(installations.map((i) => i.crm))) {
      for (const status of installationStatusSchema.options)
        ctx.metrics.installations.set({ crm, status }, 0);
    }
    for (const i of installations) ctx.metrics.installations.inc({ crm: i.crm, status: i.status });
  }
}

/** One loop per context (every server app built on it shares it), keyed by its metrics registry. */
const refreshers = new WeakMap<object, MetricsRefresher>();

export function metricsRefresherFor(ctx: AppContext, intervalMs?: number): MetricsRefresher {
  let refresher = refreshers.get(ctx.metrics);
  if (!refresher) {
    refresher = new MetricsRefresher(ctx, intervalMs);
    refreshers.set(ctx.metrics, refresher);
  }
  return refresher;
}
