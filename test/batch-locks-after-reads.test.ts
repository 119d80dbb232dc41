import { describe, expect, it } from 'vitest';
import { type BatchJob, batchJobSchema } from '../src/pipeline/batch-job.js';
import { type BatchOutcome, enrichBatch } from '../src/pipeline/enrich-batch.js';
import type { ReportClient } from '../src/reports/client.js';
import { suiteSystem } from './support/local-system.js';
import { keysWithPrefix, queuesIdle, scoreOnRecord } from './support/system-state.js';

/**
 * Issue 30: a backfill batch takes its records' locks only around its compare and write, after its searches and
 * report reads. A batch is held in one report read here (a report client that answers that slug only when the
 * test releases it): an event for another record of the batch lands on the CRM meanwhile, and an admin's unlink
 * made meanwhile is not written over when the batch goes on (the batch plans that record again under its locks).
 * Before, the batch held its locks through its reads and the event waited for the whole batch (up to 30 s, then
 * its job was retried).
 */

const system = suiteSystem({ companies: 40, logLevel: 'silent' }, { firstRunEnded: true });

/** A report client whose read of `slug` waits for `release()`; `blocked` settles when the batch reaches it. */
function heldRead(client: ReportClient, slug: string) {
  let release!: () => void;
  let reached!: () => void;
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  const blocked = new Promise<void>((resolve) => {
    reached = resolve;
  });
  const held = new Proxy(client, {
    get(target, prop) {
      if (prop === 'getReport') {
        return async (s: string) => {
          if (s === slug) {
            reached();
            await released;
          }
          return target.getReport(s);
        };
      }
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return { client: held, blocked, release };
}

/** Two matched records on different reports: the batch reads `blocker`'s report first and is held there. */
function twoLinked(skip: ReadonlySet<string>): {
  blocker: string;
  blockerSlug: string;
  target: string;
  slug: string;
} {
  const linked = system.recordIds
    .map((id) => ({ id, r: system.crm.record(id)! }))
    .filter(({ id, r }) => r.status === 'matched' && r.slug && !skip.has(id));
  const [first, ...rest] = linked;
  const other = rest.find(({ r }) => r.slug !== first!.r.slug)!;
  return { blocker: first!.id, blockerSlug: first!.r.slug!, target: other.id, slug: other.r.slug! };
}

async function startHeldBatch(blocker: string, target: string, blockerSlug: string, batchId: string) {
  const { ctx, installationId } = system;
  await queuesIdle(system);
  // As if the first sync was longer ago than REPORT_CACHE_SECONDS: the batch reads its reports.
  const prefix = ctx.config.redisPrefix;
  const cached = (await keysWithPrefix(ctx.redis, prefix)).filter((k) => k.startsWith(`${prefix}:rcache:`));
  if (cached.length > 0) await ctx.redis.del(...cached);
  const targets = await ctx.runtime.open(installationId);
  const held = heldRead(targets.client, blockerSlug);
  // The blocker's report is the batch's first read; the target's comes after it.
  // Only linked records: a search's hits are kept as reads, and one could save the batch its held read.
  const others = system.recordIds
    .filter((id) => id !== blocker && id !== target && system.crm.record(id)?.slug)
    .slice(0, 8);
  const recordIds = [blocker, ...others, target];
  const job: BatchJob = batchJobSchema.parse({
    installationId,
    batchId,
    mode: 'full',
    recordIds,
    records: await targets.connector.readCompanies(recordIds),
    origin: { kind: 'sync', runId: `full-${installationId}-${Date.now().toString(36)}-${batchId}` },
  });
  let settled = false;
  const batch: Promise<BatchOutcome> = enrichBatch(
    ctx.pipeline.deps,
    { connector: targets.connector, client: held.client },
    job,
  ).finally(() => {
    settled = true;
  });
  // Kept from an unhandled rejection while the test waits; the test awaits `batch` itself.
  batch.catch(() => undefined);
  await Promise.race([
    held.blocked,
    batch.then((outcome) => {
      throw new Error(`the batch ended without reaching its held read: ${JSON.stringify(outcome.result)}`);
    }),
  ]);
  return { batch, release: held.release, settled: () => settled };
}

describe('a batch holds its record locks only around its write', () => {
  const used = new Set<string>();

  it('an event for a record of a batch held in its report reads lands before the batch goes on', {
    timeout: 60_000,
  }, async () => {
    const { blocker, blockerSlug, target, slug } = twoLinked(used);
    used.add(blocker).add(target);
    const held = await startHeldBatch(blocker, target, blockerSlug, 'held-event');
    const score = system.sandbox.getReport(slug)!.score.overall + 3.25;
    try {
      // The sandbox sends the signed score.changed to the connector.
      system.sandbox.updateReport(slug, { score: { overall: score } });
      // Before, the event's batch waited for these records' locks: 30 s, then its job was retried.
      await scoreOnRecord(
        system,
        target,
        score,
        'the new score on the record while the batch is held',
        15_000,
      );
      expect(held.settled()).toBe(false);
    } finally {
      held.release();
    }
    const { result } = await held.batch;
    expect(result.failed).toBe(0);
    // The batch read the target's report after the change (the event's read, kept): nothing older was written.
    expect(system.crm.record(target)?.score).toBe(score);
  });

  it('an unlink made while the batch is held is not written over: the batch plans that record again', {
    timeout: 60_000,
  }, async () => {
    const { ctx, installationId } = system;
    const { blocker, blockerSlug, target } = twoLinked(used);
    used.add(blocker).add(target);
    const held = await startHeldBatch(blocker, target, blockerSlug, 'held-unlink');
    try {
      // Written through the batch path under the target's lock, which the held batch does not hold yet.
      await ctx.records.unlinkRecords(installationId, [target]);
      expect(system.crm.record(target)).toMatchObject({
        slug: null,
        status: 'no_match',
        linkSource: 'admin',
      });
      expect(held.settled()).toBe(false);
    } finally {
      held.release();
    }
    const { result } = await held.batch;
    expect(result.failed).toBe(0);
    // The batch had planned the target as linked, from the records as listed before the unlink.
    expect(system.crm.record(target)).toMatchObject({ slug: null, status: 'no_match', linkSource: 'admin' });
    expect(await ctx.index.statusOf(installationId, target)).toBe('no_match');
    expect(await ctx.index.slugsOf(installationId, [target])).toEqual([null]);
  });
});
