import type { Installation } from '../installations/store.js';
import type { Metrics } from '../metrics.js';
import type { LatencySource } from '../storage/event-latency.js';
import type { Pipeline } from './pipeline.js';
import type { QueueName } from './queue-names.js';

type QueueCounts = Record<QueueName, { waiting: number; active: number; delayed: number }>;

/**
 * The real-time lane's gauges, set by the one loop that refreshes `/metrics` (app/metrics-refresher.ts): how deep each queue is, and how
 * long the oldest change not yet written has waited, in the score-change inbox and in the installations'
 * pending slugs, and the event-to-CRM histogram the workers keep in Redis. An operator alerts on the age: it
 * grows when real time falls behind, whatever the cause.
 */
export async function setLaneMetrics(
  metrics: Metrics,
  pipeline: Pipeline,
  counts: QueueCounts,
  installations: readonly Installation[],
  now = Date.now(),
): Promise<void> {
  for (const [queue, c] of Object.entries(counts))
    metrics.queueDepth.set({ queue }, c.waiting + c.active + c.delayed);
  const [inbox, ...pending] = await Promise.all([
    pipeline.deps.inbox.oldest(),
    ...installations.map((i) => pipeline.pendingSlugs.oldest(i.id)),
  ]);
  const age = (at: number | null | undefined) =>
    at === null || at === undefined ? 0 : Math.max(0, now - at) / 1000;
  metrics.oldestPendingSeconds.set({ queue: 'score_inbox' }, age(inbox));
  const oldestPending = pending.reduce<number | null>(
    (min, at) => (at === null || at === undefined ? min : min === null ? at : Math.min(min, at)),
    null,
  );
  metrics.oldestPendingSeconds.set({ queue: 'pending_slugs' }, age(oldestPending));
  const { latencies } = pipeline.deps;
  for (const source of ['report', 'crm'] satisfies LatencySource[]) {
    const totals = await latencies.totals(source);
    for (const { le, count } of totals.buckets) metrics.eventToCrmBucket.set({ source, le }, count);
    metrics.eventToCrmSum.set({ source }, totals.sum);
    metrics.eventToCrmCount.set({ source }, totals.count);
  }
}
