import { afterEach, describe, expect, it } from 'vitest';
import type { LocalSystem } from '../local/system.js';
import { wrongRecords } from './support/expectations.js';
import { startTestSystem, stopTestSystem } from './support/local-system.js';
import { keysWithPrefix, runEnded } from './support/system-state.js';

let started: LocalSystem | undefined;

/**
 * Each test gets a system of its own whose first backfill has ended: the tests change the sandbox, the
 * webhook settings and the CRM's call counts, so sharing one system made each depend on those before it.
 */
async function backfilledSystem(): Promise<LocalSystem> {
  started = await startTestSystem({ companies: 1000 });
  await runEnded(started);
  return started;
}

afterEach(async () => {
  await stopTestSystem(started);
  started = undefined;
});

describe('backfill of 1,000 companies against the local HubSpot and the sandbox', () => {
  it('ends with every record in its right state', async () => {
    const system = await backfilledSystem();
    const run = await runEnded(system);
    expect(run.state).toBe('done');
    expect(run.recordsListed).toBe(1000);
    expect(wrongRecords(system)).toEqual([]);
    expect(run.totals.failed).toBe(0);
    // The run's cached reports and searches went with its end, its batches too: the history keeps the run's
    // summary on its hash.
    const left = await keysWithPrefix(system.ctx.redis, system.ctx.config.redisPrefix);
    const ofRun = left.filter((k) => k.startsWith(`${system.ctx.keys.run(run.id)}:`));
    expect(ofRun).toEqual([]);
    expect(left).toContain(system.ctx.keys.run(run.id));
  });

  it('writes in batches of 100 and reads each distinct slug once', async () => {
    const system = await backfilledSystem();
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
    const system = await backfilledSystem();
    system.hubspot.resetStats();
    await system.ctx.pipeline.startSync(system.installationId, 'full');
    const run = await runEnded(system);
    expect(run.kind).toBe('full');
    expect(run.totals.written).toBe(0);
    expect(system.hubspot.stats().calls['companies.batchUpdate'] ?? 0).toBe(0);
  });

  it('the reconcile sweep catches a change whose webhook was missed, writing only what changed', async () => {
    const system = await backfilledSystem();
    system.sandbox.configureWebhook(undefined, undefined);
    const linked = system.recordIds.map((id) => system.crm.record(id)!).filter((r) => r.status === 'matched');
    const slug = linked[0]!.slug!;
    const sharing = linked.filter((r) => r.slug === slug);
    const next = system.sandbox.getReport(slug)!.score.overall + 4.75;
    system.sandbox.updateReport(slug, { score: { overall: next } });
    system.hubspot.resetStats();
    // A day on: the backfill was a full pass within the period, so the sweep would skip it today.
    await system.ctx.pipeline.reconcileAll(Date.now() + 25 * 3_600_000);
    const run = await runEnded(system);
    expect(run.kind).toBe('reconcile');
    expect(run.totals.written).toBe(sharing.length);
    for (const r of sharing) expect(system.crm.record(r.id)?.score).toBe(next);
    // One write call per listed page holding a changed record, none for the others.
    const pages = new Set(sharing.map((r) => Math.floor(system.recordIds.indexOf(r.id) / 100)));
    expect(system.hubspot.stats().calls['companies.batchUpdate']).toBe(pages.size);
  });
});
