/**
 * Upgrades from: deployments written before 2026-11-26 04:31 UTC, in four formats of the link index: the
 * unbucketed one (before 2026-11-25 14:49, a hash per field and a set per slug), the bucketed one with its place map
 * (`inst:{id}:place*`, before 2026-11-25 15:45), the slug index and fan-out keyed by hex digests
 * (`inst:{id}:by-slug*`, `{slug-inst-N}*`, before 2026-11-26 04:28), review items naming candidates by slug
 * (`inst:{id}:review-items`, before 2026-11-26 04:31).
 * Can go when: every deployment is at schema version 3 or more. Then the `legacy*` keys in storage/keys.ts and
 * `indexUpgradeLock` go with it.
 */
import type { AppContext } from '../app/context.js';
import { deleteByPattern } from '../redis.js';
import { deleteLinearHash } from '../storage/linear-hash.js';
import { SLUG_FANOUT_SHARDS } from '../storage/slug-fanout.js';
import type { MigrationStep } from './step.js';

/**
 * Brings a deployment's link index to the bucketed storage, so a deployment written by an earlier
 * release keeps working in place. The unbucketed keys (a hash per field, a set per slug, one global set per slug
 * for the fan-out) are not read by the pipeline. Nothing is lost by that, since the CRM record's `report_slug` is
 * the truth and a full sync writes the index again; but until it runs, a score change finds no record to update.
 * So every installation that still has unbucketed keys gets that full sync queued (once, whichever
 * process starts first) and those keys deleted; a deployment installed on the bucketed storage has none and
 * nothing happens.
 *
 * The same holds for the bucketed format that kept an auto-link's domain and country in a map of their own
 * (`inst:{id}:place*`): the record's state carries a digest of each, which only a write of the record puts there.
 * An installation with that map gets the same full sync, and the map is deleted; so does one with review items
 * whose candidates are named by slug (`inst:{id}:review-items`).
 *
 * The slug -> records map and the fan-out key a slug by a decimal digest (a listpack keeps it as an integer);
 * maps keyed by hex digests are written anew from the records' states, which hold the slugs, without a sync, and
 * then deleted with the hex fan-out shards.
 */

export interface IndexUpgrade {
  installationId: string;
  /** The full sync queued to write the bucketed index; null when none was needed or the installation cannot sync now. */
  runId: string | null;
  /** Why no sync was queued although one was needed (pending, disconnected, ...): its next full sync or reconcile writes the index. */
  skipped: string | null;
  /** Linked records put in the slug -> records map written anew from their states; null when it was not. */
  slugIndexRebuilt: number | null;
}

/** How long one process holds an installation's upgrade: longer than queuing a sync and deleting keys takes. */
const LOCK_SECONDS = 600;

export async function upgradeLinkIndex(ctx: AppContext): Promise<IndexUpgrade[]> {
  const { redis, keys } = ctx;
  const done: IndexUpgrade[] = [];
  for (const installation of await ctx.installations.list()) {
    const id = installation.id;
    const legacy = keys.legacyIndexKeys(id);
    // The fixed-name hashes say whether the unbucketed index exists: every linked or seen record had an entry in them.
    // The place map's stem (its meta hash), first bucket or `big` hash says whether it does.
    const needsSync = (await redis.exists(...legacy, ...keys.legacyPlaceKeys(id))) > 0;
    // The meta hash of the slug -> records map with hex digests: deleted last (deleteLinearHash).
    const needsSlugIndex = (await redis.exists(keys.legacySlugRecords(id))) > 0;
    if (!needsSync && !needsSlugIndex) continue;
    if ((await redis.set(keys.indexUpgradeLock(id), '1', 'EX', LOCK_SECONDS, 'NX')) === null) continue;
    let slugIndexRebuilt: number | null = null;
    if (needsSlugIndex) {
      // The records' states hold their slugs: no CRM call needed, and score changes find the records again
      // as soon as this is done.
      slugIndexRebuilt = await ctx.index.slugs.rebuild(id);
      await deleteLinearHash(redis, keys.legacySlugRecords(id));
    }
    let runId: string | null = null;
    let skipped: string | null = null;
    if (needsSync) {
      if (installation.status === 'connected') runId = await ctx.pipeline.startSync(id, 'full');
      else skipped = `installation is ${installation.status}`;
      await redis.unlink(...legacy);
      await deleteByPattern(redis, keys.legacySlugMembersPattern(id));
      await deleteByPattern(redis, keys.legacyPlacePattern(id));
    }
    ctx.logger.info(
      { installationId: id, runId, skipped, slugIndexRebuilt },
      runId
        ? 'link index upgraded: a full sync writes it anew'
        : needsSync
          ? 'link index upgraded: its next full sync or reconcile writes it anew'
          : 'link index upgraded: the slug index was written anew from the records',
    );
    done.push({ installationId: id, runId, skipped, slugIndexRebuilt });
  }
  // The unbucketed fan-out is global; a deployment that had any upgraded installation has it.
  if (done.some((d) => d.runId !== null || d.skipped !== null)) {
    await deleteByPattern(redis, keys.legacySlugInstallationsPattern());
  }
  // The fan-out's shards with hex digests: nothing reads them once every installation's slugs are in the
  // decimal ones. Sixteen fixed names, so looking costs sixteen EXISTS, not a scan.
  for (let shard = 0; shard < SLUG_FANOUT_SHARDS; shard += 1) {
    const stem = keys.legacySlugInstallationsShard(shard);
    if ((await redis.exists(stem)) > 0) await deleteLinearHash(redis, stem);
  }
  return done;
}

export const step: MigrationStep = {
  version: 3,
  name: 'link index brought to the bucketed storage',
  run: async (ctx) => {
    const done = await upgradeLinkIndex(ctx);
    return {
      installations: done.length,
      syncsQueued: done.filter((d) => d.runId !== null).length,
    };
  },
};
