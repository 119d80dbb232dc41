import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalSystem } from '../local/system.js';
import type { CrmConnector } from '../src/crm/connector.js';
import { type BatchJob, batchJobSchema } from '../src/pipeline/batch-job.js';
import { enrichBatch } from '../src/pipeline/enrich-batch.js';
import { startTestSystem, stopTestSystem, suiteSystem } from './support/local-system.js';
import { keysWithPrefix, runEnded } from './support/system-state.js';
import { waitFor } from './support/wait.js';

/**
 * The report cache across runs and jobs (issue 30), end to end on the local HubSpot and the sandbox: a second sync
 * within REPORT_CACHE_SECONDS asks the service nothing, and a batch killed after its searches and reads (it dies
 * before its write) makes none of them again when it runs again.
 */

const system = suiteSystem({ companies: 150 }, { firstRunEnded: true });

/** The connector as a worker killed at its first write sees it: everything before the write happened. */
function killedAtWrite(connector: CrmConnector): CrmConnector {
  return new Proxy(connector, {
    get(target, prop) {
      if ((prop === 'writeCompanies' || prop === 'writeCompaniesBulk') && prop in target) {
        return () => Promise.reject(new Error('worker killed before its write'));
      }
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

describe('the report cache across runs and jobs', () => {
  it('a second sync of the unchanged CRM makes no search, no read and no write', async () => {
    const first = await runEnded(system);
    system.sandbox.resetRequestCounts();
    system.hubspot.resetStats();
    const runId = await system.ctx.pipeline.startSync(system.installationId, 'full');
    const run = await runEnded(system, runId);
    expect(run.id).not.toBe(first.id);
    expect(run.state).toBe('done');
    expect(run.recordsListed).toBe(150);
    expect(run.totals.written).toBe(0);
    expect(system.sandbox.requestCount()).toBe(0);
    expect(system.hubspot.stats().calls['companies.batchUpdate'] ?? 0).toBe(0);
  });

  it('a score.changed reads its report anew through the cache, and leaves no key of its job', async () => {
    const record = system.recordIds.map((id) => system.crm.record(id)!).find((r) => r.status === 'matched')!;
    const slug = record.slug!;
    const next = system.sandbox.getReport(slug)!.score.overall + 1.25;
    system.sandbox.resetRequestCounts();
    // The sandbox sends the signed event to the connector.
    system.sandbox.updateReport(slug, { score: { overall: next } });
    await waitFor('the change on its record', () =>
      system.crm.record(record.id)?.score === next ? true : undefined,
    );
    expect(system.sandbox.answeredReads().get(slug)).toBe(1);
    const { ctx } = system;
    const left = await keysWithPrefix(ctx.redis, ctx.config.redisPrefix);
    expect(left.filter((k) => k.includes('{ev-'))).toEqual([]);
  });

  it('a batch killed after its searches and reads makes none of them again on retry', async () => {
    // No webhooks: the changes below reach the records only through this batch.
    system.sandbox.configureWebhook(undefined, undefined);
    const { ctx } = system;
    const prefix = ctx.config.redisPrefix;
    const cached = (await keysWithPrefix(ctx.redis, prefix)).filter((k) => k.startsWith(`${prefix}:rcache:`));
    expect(cached.length).toBeGreaterThan(0);
    // As if the first sync was longer ago than REPORT_CACHE_SECONDS: the batch must search and read.
    await ctx.redis.del(...cached);
    const recordIds = system.recordIds.slice(0, 100);
    const linked = recordIds.map((id) => system.crm.record(id)!).filter((r) => r.status === 'matched');
    const slugs = [...new Set(linked.map((r) => r.slug!))].slice(0, 5);
    expect(slugs.length).toBeGreaterThan(0);
    const scores = new Map(slugs.map((s) => [s, system.sandbox.getReport(s)!.score.overall + 2.25]));
    for (const [slug, overall] of scores) system.sandbox.updateReport(slug, { score: { overall } });

    const job: BatchJob = batchJobSchema.parse({
      installationId: system.installationId,
      batchId: 'kill-test',
      mode: 'full',
      recordIds,
      origin: { kind: 'sync', runId: `full-${system.installationId}-${Date.now().toString(36)}-c0ffee` },
    });
    const targets = await ctx.runtime.open(system.installationId);
    system.sandbox.resetRequestCounts();
    await expect(
      enrichBatch(
        ctx.pipeline.deps,
        { connector: killedAtWrite(targets.connector), client: targets.client },
        job,
      ),
    ).rejects.toThrow('worker killed');
    const firstAttempt = system.sandbox.requestCount();
    expect(system.sandbox.requestCount({ route: 'GET /v1/reports/:slug' })).toBeGreaterThan(0);
    expect(system.sandbox.requestCount({ route: 'GET /v1/search' })).toBeGreaterThan(0);

    system.sandbox.resetRequestCounts();
    system.hubspot.resetStats();
    const { result } = await enrichBatch(ctx.pipeline.deps, targets, job);
    expect(system.sandbox.requestCount()).toBe(0);
    expect(firstAttempt).toBeGreaterThan(0);
    expect(result.written).toBeGreaterThanOrEqual(linked.filter((r) => scores.has(r.slug!)).length);
    for (const r of linked.filter((l) => scores.has(l.slug!))) {
      expect(system.crm.record(r.id)?.score).toBe(scores.get(r.slug!));
    }
  });
});

describe('on Salesforce', () => {
  let sf: LocalSystem;

  beforeAll(async () => {
    sf = await startTestSystem({ crm: 'salesforce', companies: 150, logLevel: 'silent' });
    await runEnded(sf);
  }, 120_000);

  afterAll(async () => {
    await stopTestSystem(sf);
  });

  it('a second sync of the unchanged org makes no search, no read and no write', async () => {
    sf.sandbox.resetRequestCounts();
    const runId = await sf.ctx.pipeline.startSync(sf.installationId, 'full');
    const run = await runEnded(sf, runId);
    expect(run.state).toBe('done');
    expect(run.recordsListed).toBe(150);
    expect(run.totals.written).toBe(0);
    expect(sf.sandbox.requestCount()).toBe(0);
  });
});
