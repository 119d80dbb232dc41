/**
 * Child process of bench/webhooks.ts: a whole local system (sandbox, local HubSpot, server, workers) as
 * `startLocalSystem` builds it, after its first backfill. The load generator runs in the parent, so the two do
 * not share an event loop. Calls: `outcomes` (the server's own count of webhook answers), `drain` (wait for
 * the realtime queue to empty) and `eventToCrm` (score changes in the sandbox, timed until the CRM shows them).
 */
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { type LocalSystem, startLocalSystem } from '../../local/system.js';
import { pollUntil } from '../support/measure.js';
import { serveRpc } from '../support/rpc.js';

export interface WebhookSystemConfig {
  companies: number;
  prefix: string;
  redisUrl: string;
  workers: number;
  logLevel: string;
  timeoutMs: number;
}

export interface WebhookSystemReady {
  appUrl: string;
  /** The Standard Webhooks secret the app verifies with (`whsec_…`). */
  secret: string;
  /** Published slugs, for events. */
  slugs: string[];
  /** One linked record per distinct slug, for the event-to-CRM timing. */
  linked: { recordId: string; slug: string }[];
}

export interface EventToCrmResult {
  /** Milliseconds from the sandbox change to the record showing the new score, one per sample that arrived. */
  latenciesMs: number[];
  /** Samples whose change had not reached the CRM within the time limit. */
  missed: number;
}

export type WebhookSystemProtocol = {
  outcomes: { args: null; result: Record<string, number> };
  drain: { args: { timeoutMs: number }; result: { waitedMs: number } };
  eventToCrm: { args: { samples: number; perSampleTimeoutMs: number }; result: EventToCrmResult };
};

const POLL_MS = 5;
/** The sandbox's limit and the connector's pace for re-reads after events. */
export const REPORTS_PER_MINUTE = 6_000;

async function outcomes(system: LocalSystem): Promise<Record<string, number>> {
  const metric = await system.ctx.metrics.webhookEvents.get();
  const out: Record<string, number> = {};
  for (const v of metric.values) {
    if (v.labels.source !== 'reports') continue;
    const outcome = String(v.labels.outcome);
    out[outcome] = (out[outcome] ?? 0) + v.value;
  }
  return out;
}

async function drain(system: LocalSystem, timeoutMs: number): Promise<{ waitedMs: number }> {
  const started = Date.now();
  await pollUntil(
    'the realtime queue to empty',
    async () => {
      const { realtime } = await system.ctx.queues.counts();
      return realtime.waiting + realtime.active + realtime.delayed === 0 ? true : undefined;
    },
    timeoutMs,
    100,
  );
  return { waitedMs: Date.now() - started };
}

/** A score different from `current`, varied per sample so that every change is a real change. */
function nextScore(current: number | null, sample: number): number {
  const candidate = Math.round((15 + ((sample * 7.3) % 80)) * 10) / 10;
  return candidate === current ? Math.round((candidate + 0.1) * 10) / 10 : candidate;
}

async function eventToCrm(
  system: LocalSystem,
  linked: WebhookSystemReady['linked'],
  samples: number,
  perSampleTimeoutMs: number,
): Promise<EventToCrmResult> {
  const latenciesMs: number[] = [];
  let missed = 0;
  for (let i = 0; i < samples; i++) {
    const target = linked[i % linked.length]!;
    const overall = nextScore(system.crm.record(target.recordId)?.score ?? null, i);
    const changedAt = performance.now();
    system.sandbox.updateReport(target.slug, { score: { overall } });
    const deadline = changedAt + perSampleTimeoutMs;
    while (system.crm.record(target.recordId)?.score !== overall && performance.now() < deadline) {
      await sleep(POLL_MS);
    }
    if (system.crm.record(target.recordId)?.score === overall)
      latenciesMs.push(performance.now() - changedAt);
    else missed += 1;
  }
  return { latenciesMs, missed };
}

await serveRpc<WebhookSystemProtocol, WebhookSystemConfig, WebhookSystemReady>(async (config) => {
  const system = await startLocalSystem({
    companies: config.companies,
    prefix: config.prefix,
    redisUrl: config.redisUrl,
    workers: config.workers,
    logLevel: config.logLevel,
    sandboxRateLimitPerMinute: REPORTS_PER_MINUTE,
    // Paced to the sandbox's limit, as an operator who knows the limit would set it (the default is 600).
    env: { REPORTS_RATE_PER_MINUTE: String(REPORTS_PER_MINUTE) },
  });
  try {
    // The first backfill links the records; the bench starts on a settled system.
    await pollUntil(
      'the first backfill to finish',
      async () => {
        const [run] = await system.ctx.runs.recent(system.installationId, 1);
        return run && (run.state === 'done' || run.state === 'stopped') ? run : undefined;
      },
      config.timeoutMs,
    );
    await drain(system, config.timeoutMs);
  } catch (err) {
    await system.close();
    throw err;
  }

  const bySlug = new Map<string, string>();
  for (const id of system.recordIds) {
    const record = system.crm.record(id);
    if (record?.status === 'matched' && record.slug && !bySlug.has(record.slug)) bySlug.set(record.slug, id);
  }
  const linked = [...bySlug].map(([slug, recordId]) => ({ slug, recordId }));
  if (linked.length === 0) {
    await system.close();
    throw new Error('the first backfill linked no record, so no score change can be followed');
  }
  const secret = system.ctx.config.reports.webhookSecrets[0];
  if (!secret) {
    await system.close();
    throw new Error('the local system has no webhook secret');
  }

  return {
    ready: {
      appUrl: system.appUrl,
      secret,
      slugs: system.sandbox
        .listReports()
        .filter((r) => r.published)
        .map((r) => r.slug),
      linked,
    },
    handlers: {
      outcomes: () => outcomes(system),
      drain: ({ timeoutMs }) => drain(system, timeoutMs),
      eventToCrm: ({ samples, perSampleTimeoutMs }) =>
        eventToCrm(system, linked, samples, perSampleTimeoutMs),
    },
    close: () => system.close(),
  };
});
