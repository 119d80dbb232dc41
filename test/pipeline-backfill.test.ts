import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalSystem, startLocalSystem } from '../src/app/local-system.js';
import { wrongRecords } from './support/expectations.js';
import { waitFor } from './support/wait.js';

const prefix = `rc-test-${randomUUID().slice(0, 8)}`;
let system: LocalSystem;

async function finishedRun(sys: LocalSystem) {
  return waitFor(
    'the sync run to finish',
    async () => {
      const [run] = await sys.ctx.runs.recent(sys.installationId, 1);
      return run && (run.state === 'done' || run.state === 'stopped') ? run : undefined;
    },
    120_000,
    200,
  );
}

beforeAll(async () => {
  system = await startLocalSystem({ companies: 1000, prefix, workers: 1 });
});

afterAll(async () => {
  await system?.close();
  const { createRedis, closeRedis } = await import('../src/redis.js');
  const r = createRedis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', 'worker');
  let cursor = '0';
  do {
    const [next, keys] = await r.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
    cursor = next;
    if (keys.length) await r.unlink(...keys);
  } while (cursor !== '0');
  await closeRedis(r);
});

describe('backfill of 1,000 companies against the local HubSpot and the sandbox', () => {
  it('ends with every record in its right state', async () => {
    const run = await finishedRun(system);
    expect(run.state).toBe('done');
    expect(run.recordsListed).toBe(1000);
    expect(wrongRecords(system)).toEqual([]);
    expect(run.totals.failed).toBe(0);
  });

  it('writes in batches of 100 and reads each distinct slug once', async () => {
    const stats = system.hubspot.stats();
    const batchUpdates = stats.calls['companies.batchUpdate'] ?? 0;
    expect(batchUpdates).toBeGreaterThanOrEqual(10);
    expect(batchUpdates).toBeLessThanOrEqual(11);
    const distinctSlugs = new Set(
      system.recordIds.map((id) => system.hubspot.getCompany(id)?.properties.report_slug).filter(Boolean),
    ).size;
    expect(system.sandbox.requestCount({ route: 'GET /v1/reports/:slug' })).toBeLessThanOrEqual(
      Math.ceil(distinctSlugs * 1.02),
    );
  });

  it('a second sync of the unchanged CRM makes no write calls', async () => {
    system.hubspot.resetStats();
    await system.ctx.pipeline.startSync(system.installationId, 'full');
    const run = await finishedRun(system);
    expect(run.kind).toBe('full');
    expect(run.totals.written).toBe(0);
    expect(system.hubspot.stats().calls['companies.batchUpdate'] ?? 0).toBe(0);
  });

  it('the reconcile sweep catches a change whose webhook was missed, writing only what changed', async () => {
    system.sandbox.configureWebhook(undefined, undefined);
    const linked = system.recordIds.map((id) => system.crm.record(id)!).filter((r) => r.status === 'matched');
    const slug = linked[0]!.slug!;
    const sharing = linked.filter((r) => r.slug === slug);
    const next = system.sandbox.getReport(slug)!.score.overall + 4.75;
    system.sandbox.updateReport(slug, { score: { overall: next } });
    system.hubspot.resetStats();
    await system.ctx.pipeline.reconcileAll();
    const run = await finishedRun(system);
    expect(run.kind).toBe('reconcile');
    expect(run.totals.written).toBe(sharing.length);
    for (const r of sharing) expect(system.crm.record(r.id)?.score).toBe(next);
    // One write call per listed page holding a changed record, none for the others.
    const pages = new Set(sharing.map((r) => Math.floor(system.recordIds.indexOf(r.id) / 100)));
    expect(system.hubspot.stats().calls['companies.batchUpdate']).toBe(pages.size);
  });
});
