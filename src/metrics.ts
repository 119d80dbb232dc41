import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

/** Prometheus metrics, one registry per process (tests make their own). */
export class Metrics {
  readonly registry = new Registry();
  readonly upstreamCalls = new Counter({
    name: 'report_connector_upstream_calls_total',
    help: 'Calls to the report service and the CRMs, by service, endpoint and status',
    labelNames: ['service', 'endpoint', 'outcome'] as const,
    registers: [this.registry],
  });
  readonly rateLimitWaits = new Counter({
    name: 'report_connector_rate_limit_waits_total',
    help: "Times a request waited for its identity's rate gate",
    labelNames: ['service'] as const,
    registers: [this.registry],
  });
  readonly rateLimitCuts = new Counter({
    name: 'report_connector_rate_limit_cuts_total',
    help: "Times a 429 lowered an identity's learnt rate (report-service keys)",
    labelNames: ['service'] as const,
    registers: [this.registry],
  });
  readonly webhookEvents = new Counter({
    name: 'report_connector_webhook_events_total',
    help: 'Inbound webhook requests by source and outcome (accepted, duplicate, bad_signature, ...)',
    labelNames: ['source', 'outcome'] as const,
    registers: [this.registry],
  });
  readonly webhookAckSeconds = new Histogram({
    name: 'report_connector_webhook_ack_seconds',
    help: 'Time to acknowledge an inbound webhook',
    labelNames: ['source'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
    registers: [this.registry],
  });
  readonly recordsWritten = new Counter({
    name: 'report_connector_records_written_total',
    help: 'CRM records written, by CRM and result',
    labelNames: ['crm', 'result'] as const,
    registers: [this.registry],
  });
  readonly jobs = new Gauge({
    name: 'report_connector_jobs',
    help: 'Jobs by queue and state',
    labelNames: ['queue', 'state'] as const,
    registers: [this.registry],
  });

  /**
   * The real-time lane, for alerts: from a report event's acceptance (202) or a CRM change's arrival to
   * the end of the update that wrote its records (`source`: report, crm). A histogram in Prometheus's series
   * (`_bucket` with `le`, `_sum`, `_count`), kept in Redis by whichever process wrote the records
   * (storage/event-latency.ts) and set here at each scrape: gauges of totals that only grow, so `rate()` and
   * `histogram_quantile()` apply as to a histogram.
   */
  readonly eventToCrmBucket = new Gauge({
    name: 'report_connector_event_to_crm_seconds_bucket',
    help: "Updates whose time from a report event's acceptance or a CRM change's arrival to the CRM write was at most le seconds (cumulative, all processes)",
    labelNames: ['source', 'le'] as const,
    registers: [this.registry],
  });
  readonly eventToCrmSum = new Gauge({
    name: 'report_connector_event_to_crm_seconds_sum',
    help: 'Sum of the event-to-CRM times, seconds (all processes)',
    labelNames: ['source'] as const,
    registers: [this.registry],
  });
  readonly eventToCrmCount = new Gauge({
    name: 'report_connector_event_to_crm_seconds_count',
    help: 'Updates timed from their event to the CRM write (all processes)',
    labelNames: ['source'] as const,
    registers: [this.registry],
  });
  readonly oldestPendingSeconds = new Gauge({
    name: 'report_connector_oldest_pending_update_seconds',
    help: 'Age of the oldest change not yet written, by where it waits (score_inbox: not fanned out yet; pending_slugs: its records not written yet); 0 when none waits',
    labelNames: ['queue'] as const,
    registers: [this.registry],
  });
  readonly oldestQueuedSeconds = new Gauge({
    name: 'report_connector_oldest_queued_job_seconds',
    help: "Age of the oldest job waiting to run, by queue (lane: backfill, realtime, schedule), as the workers' liveness watch last saw it; 0 when none waits",
    labelNames: ['queue'] as const,
    registers: [this.registry],
  });
  readonly queueDepth = new Gauge({
    name: 'report_connector_queue_depth',
    help: 'Jobs waiting, delayed or active, by queue (lane: backfill, realtime, schedule)',
    labelNames: ['queue'] as const,
    registers: [this.registry],
  });

  readonly installations = new Gauge({
    name: 'report_connector_installations',
    help: 'Installations by CRM and status (pending: waiting for approval; alert on disconnected and key_invalid)',
    labelNames: ['crm', 'status'] as const,
    registers: [this.registry],
  });

  readonly redisUp = new Gauge({
    name: 'report_connector_redis_up',
    help: "Whether Redis answered this process's last metrics refresh and the connection is up (1) or not (0); the Redis-read values are from the last answer",
    registers: [this.registry],
  });
  readonly redisMetricsAge = new Gauge({
    name: 'report_connector_redis_metrics_age_seconds',
    help: 'Age of the values read from Redis (jobs, workers, installations, lanes), refreshed by one loop every 15 s; absent before the first read',
    registers: [this.registry],
  });
  readonly workers = new Gauge({
    name: 'report_connector_workers',
    help: 'Workers attached per queue, over every process (alert on 0: nothing is processed, webhooks still queue)',
    labelNames: ['queue'] as const,
    registers: [this.registry],
  });
  readonly processWorkersRunning = new Gauge({
    name: 'report_connector_process_workers_running',
    help: "Whether this process's own workers run (start --one-process); absent in a process without workers",
    registers: [this.registry],
  });

  readonly runsJoined = new Counter({
    name: 'report_connector_runs_joined_total',
    help: 'Syncs asked for that joined the run under way on their installation, by the kind asked for',
    labelNames: ['kind'] as const,
    registers: [this.registry],
  });
  readonly runsSuperseded = new Counter({
    name: 'report_connector_runs_superseded_total',
    help: 'Runs under way stopped for a sync that covers more (a full sync during an incremental or reconcile run)',
    labelNames: ['kind'] as const,
    registers: [this.registry],
  });
  readonly runsStopped = new Counter({
    name: 'report_connector_runs_stopped_total',
    help: 'Runs stopped before their end, by reason (superseded, stale: no progress, no_jobs: its jobs were lost, other)',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });

  constructor(options: { defaults?: boolean } = {}) {
    if (options.defaults ?? true) collectDefaultMetrics({ register: this.registry });
  }
}
