import { hubspotProvider } from '../../connectors/hubspot/index.js';
import { checkRedis, ensureTokenModeInstallations } from '../../src/app/bootstrap.js';
import { createAppContext } from '../../src/app/context.js';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/log.js';
import type { BackfillRunner, ConnectorSideConfig } from './backfill-setup.js';
import { MemorySampler, pollUntil } from './measure.js';

/**
 * The backfill as the product runs it: the production context and one worker set (default concurrency) in
 * this process, pointed at the services process, doing the initial sync of the installation that token mode
 * creates. Preparing creates the installation, its fields and the run; work starts when the workers start
 * and ends when the run is done and no job is left in the work queues.
 */

const POLL_MS = 100;

export async function preparePipelineBackfill(bench: ConnectorSideConfig): Promise<BackfillRunner> {
  const { services, limits } = bench;
  const logger = createLogger(bench.logLevel);
  const config = loadConfig(
    {},
    {
      mode: 'demo',
      envFile: null,
      overrides: {
        REDIS_URL: bench.redisUrl,
        REDIS_PREFIX: bench.prefix,
        // No HTTP server is started; the configuration only needs a well-formed address.
        APP_URL: 'http://127.0.0.1:9',
        REPORTS_API_URL: services.sandboxUrl,
        REPORTS_API_KEY: 'sk_sandbox_read',
        REPORTS_RATE_PER_MINUTE: String(limits.reportsPerMinute),
        HUBSPOT_API_URL: services.hubspotUrl,
        HUBSPOT_ACCESS_TOKEN: services.privateAppToken,
        LOG_LEVEL: bench.logLevel,
      },
    },
  );

  // The connector paces a portal to HubSpot's published budget; the bench's CRM has a scaled budget, so the
  // pace is scaled by the same factor. This process exists only for the bench.
  hubspotProvider.limits = {
    ...hubspotProvider.limits,
    requestsPerWindow: limits.crmGate.max,
    windowMs: limits.crmGate.windowMs,
  };
  const ctx = createAppContext(config, { logger });
  await checkRedis(ctx);
  const [installation] = await ensureTokenModeInstallations(ctx);
  if (!installation) throw new Error('token mode created no installation');
  const [initial] = await ctx.runs.recent(installation.id, 1);
  if (!initial) throw new Error('token mode started no initial sync');
  const runId = initial.id;

  return {
    async run() {
      const notes: string[] = [];
      const sampler = new MemorySampler();
      sampler.start();
      const startedAt = Date.now();
      await ctx.startWorkers();
      // Only the run's state is polled: summing its batches on every poll would cost this process more than
      // the pipeline's own bookkeeping does.
      const runKey = ctx.keys.run(runId);
      await pollUntil(
        'the initial sync to finish',
        async () => {
          const state = await ctx.redis.hget(runKey, 'state');
          return state === 'done' || state === 'stopped' ? state : undefined;
        },
        bench.timeoutMs,
        POLL_MS,
      );
      const run = await ctx.runs.get(runId);
      if (!run) throw new Error(`run ${runId} vanished`);
      if (run.state === 'stopped') notes.push(`the run stopped: ${run.stoppedReason}`);
      // The run is done when every batch has reported; records a batch handed back for a retry may still be
      // queued on the realtime queue. (The schedule queue holds timers, not work.)
      let firstCheck = true;
      let stragglers = false;
      await pollUntil(
        'the work queues to empty',
        async () => {
          const counts = await ctx.queues.counts();
          const busy = [counts.backfill, counts.realtime].some((c) => c.waiting + c.active + c.delayed > 0);
          if (busy && firstCheck) stragglers = true;
          firstCheck = false;
          return busy ? undefined : true;
        },
        Math.max(1_000, bench.timeoutMs - (Date.now() - startedAt)),
        POLL_MS,
      );
      const endedAt = stragglers || !run.finishedAt ? Date.now() : Date.parse(run.finishedAt);
      const memory = sampler.stop();
      if (stragglers) notes.push('retried records were still queued when the run finished');
      if (run.totals.failed > 0)
        notes.push(`${run.totals.failed} records failed (first: ${run.errors[0]?.message})`);
      return { records: run.recordsListed, elapsedMs: endedAt - startedAt, memory, notes };
    },
    close: () => ctx.close(),
  };
}
