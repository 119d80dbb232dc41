import { deleteByPattern } from '../redis.js';
import type { AppContext } from './context.js';

/**
 * The link index moved to bucketed storage (issue 15): its old keys (a hash per field, a set per slug, one global
 * set per slug for the fan-out) are no longer read. Nothing is lost by that, since the CRM record's
 * `report_slug` is the truth and a full sync writes the index again; but until it runs, a score change finds no
 * record to update. So at start-up every installation that still has old keys gets that full sync queued (once,
 * whichever process starts first) and its old keys deleted; a deployment installed on the new storage has none
 * and nothing happens.
 *
 * The same holds for the bucketed index's first format, which kept an auto-link's domain and country in a map
 * of their own (`inst:{id}:place*`): the record's state now carries a digest of each instead, which only a write
 * of the record puts there. An installation with that map gets the same full sync, and the map is deleted.
 */

export interface IndexUpgrade {
  installationId: string;
  /** The full sync queued to write the new index; null when the installation cannot sync now. */
  runId: string | null;
  /** Why no sync was queued (pending, disconnected, ...): its next full sync or reconcile writes the index. */
  skipped: string | null;
}

/** How long one process holds an installation's upgrade: longer than queuing a sync and deleting keys takes. */
const LOCK_SECONDS = 600;

export async function upgradeLinkIndex(ctx: AppContext): Promise<IndexUpgrade[]> {
  const { redis, keys } = ctx;
  const done: IndexUpgrade[] = [];
  for (const installation of await ctx.installations.list()) {
    const id = installation.id;
    const legacy = keys.legacyIndexKeys(id);
    // The fixed-name hashes say whether the old index exists: every linked or seen record had an entry in them.
    // The place map's stem (its meta hash), first bucket or `big` hash says whether it does.
    if ((await redis.exists(...legacy, ...keys.legacyPlaceKeys(id))) === 0) continue;
    if ((await redis.set(keys.indexUpgradeLock(id), '1', 'EX', LOCK_SECONDS, 'NX')) === null) continue;
    let runId: string | null = null;
    let skipped: string | null = null;
    if (installation.status === 'connected') runId = await ctx.pipeline.startSync(id, 'full');
    else skipped = `installation is ${installation.status}`;
    await redis.unlink(...legacy);
    await deleteByPattern(redis, keys.legacySlugMembersPattern(id));
    await deleteByPattern(redis, keys.legacyPlacePattern(id));
    ctx.logger.info(
      { installationId: id, runId, skipped },
      runId
        ? 'link index upgraded: a full sync writes it anew'
        : 'link index upgraded: its next full sync or reconcile writes it anew',
    );
    done.push({ installationId: id, runId, skipped });
  }
  // The old fan-out is global; a deployment that had any upgraded installation has it.
  if (done.length > 0) await deleteByPattern(redis, keys.legacySlugInstallationsPattern());
  return done;
}
