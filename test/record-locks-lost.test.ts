import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import type { CrmConnector } from '../src/crm/connector.js';
import { type BatchJob, batchJobSchema } from '../src/pipeline/batch-job.js';
import { enrichBatch } from '../src/pipeline/enrich-batch.js';
import { LOCK_LEASE_MS, RecordLocksLostError } from '../src/storage/record-locks.js';
import { suiteSystem } from './support/local-system.js';
import { queuesIdle } from './support/system-state.js';

/**
 * A batch whose record leases lapsed while it wrote (its holder stalled past a lease) stops writing: another
 * holder may have written those records meanwhile, and what is left was compared against a state that may be
 * gone. Here the locks are taken by another holder during the batch's first write call; the batch must not make
 * its second. Before, `held()` was never asked and the batch wrote on.
 */

const system = suiteSystem({ companies: 20, logLevel: 'silent' }, { firstRunEnded: true });

/** A connector writing two records per call whose first write call runs `during` before it answers. */
function pausingWrites(connector: CrmConnector, during: () => Promise<void>): CrmConnector {
  let calls = 0;
  return new Proxy(connector, {
    get(target, prop) {
      if (prop === 'limits') return { ...target.limits, writeBatchSize: 2 };
      if (prop === 'writeCompanies') {
        return async (...args: Parameters<CrmConnector['writeCompanies']>) => {
          const results = await target.writeCompanies(...args);
          if (++calls === 1) await during();
          return results;
        };
      }
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

describe('a batch whose record locks lapsed', () => {
  it('writes nothing more once it no longer holds them', { timeout: 60_000 }, async () => {
    const { ctx, installationId } = system;
    await queuesIdle(system);
    const recordIds = system.recordIds.filter((id) => system.crm.record(id)?.slug).slice(0, 6);
    expect(recordIds).toHaveLength(6);
    // A person's edit on each (no webhook): the batch has six records to write, three calls of two.
    for (const id of recordIds) await system.hubspot.setCompanyProperty(id, 'report_score', '1.5');
    const targets = await ctx.runtime.open(installationId);
    const lockKeys = recordIds.map((id) => ctx.keys.recordLock(installationId, id));
    const connector = pausingWrites(targets.connector, async () => {
      // Another holder has the records now, as when this one stalled past its lease.
      for (const key of lockKeys) await ctx.redis.set(key, 'another-holder', 'PX', 30_000);
      // The holder learns it at its next renewal (a third of the lease): a timer, so nothing to wait on but it.
      await sleep(LOCK_LEASE_MS / 3 + 1_000);
    });
    const job: BatchJob = batchJobSchema.parse({
      installationId,
      batchId: 'locks-lost',
      mode: 'full',
      recordIds,
      origin: { kind: 'sync', runId: `full-${installationId}-${Date.now().toString(36)}-locks-lost` },
    });
    try {
      await expect(
        enrichBatch(ctx.pipeline.deps, { connector, client: targets.client }, job),
      ).rejects.toThrow(RecordLocksLostError);
      const scores = recordIds.map((id) => system.crm.record(id)?.score);
      // The first call's two records were written while the locks were held; the other four were not.
      expect(scores.filter((s) => s === 1.5)).toHaveLength(4);
    } finally {
      await ctx.redis.del(...lockKeys);
    }
  });
});
