import { jobIdPart, type Queues } from '../queues.js';
import type { ScoreChangeInbox } from './inbox.js';
import type { PendingSlugs, SlugLane } from './pending-slugs.js';

/** Events for one slug inside this window become one read and one write per record. */
export const COALESCE_MS = 300;
/**
 * A hot slug's updates coalesce over this long: a storm on K reports then costs at most K reads (and CRM
 * reads) per HOT_COALESCE_MS. Coalescing keeps a storm cheap; it is never deprioritised behind a backfill:
 * its job runs on the realtime workers, and its records end with the storm's last score within
 * this bound plus one update.
 */
export const HOT_COALESCE_MS = 5_000;

/** What queueing a score change's work uses. */
export interface UpdateQueueDeps {
  queues: Pick<Queues, 'add'>;
  inbox: Pick<ScoreChangeInbox, 'isHot'>;
  pendingSlugs: Pick<PendingSlugs, 'mark'>;
}

/**
 * A new fan-out of the score-change inbox's marks (the `score-changes` job). Not deduplicated: the inbox's
 * kick mark already makes this rare (once per idle-to-busy change, and once per fan-out's last round), and
 * a fan-out that is just finishing must never swallow the next one. Two fan-outs at once are harmless: each
 * take is atomic.
 */
export async function kickScoreChanges(queues: Pick<Queues, 'add'>): Promise<void> {
  await queues.add('realtime', 'score-changes', {});
}

/**
 * Marks a slug's linked records for an update and makes sure the installation's update job is queued. The
 * job takes every slug marked by then and writes their records together, in full CRM batches: a burst of
 * changes on many reports costs about one write per batch of records (`limits.writeBatchSize`), not one per
 * report. A slug asked for again and again (a storm of re-scores) is hot: it waits in its own lane (and leaves
 * the urgent one), whose job coalesces over HOT_COALESCE_MS instead of COALESCE_MS, so a storm costs a few
 * reads and writes per report, and a single change's job (a lane of its own) never waits behind it. Both lanes
 * run on the realtime workers with the realtime share of the rate gates: a backfill never holds a change back.
 */
export async function enqueueSlugUpdate(
  deps: UpdateQueueDeps,
  installationId: string,
  slug: string,
  since?: number,
  /** Decided where the change came in (the inbox's accept); absent, by the slug's heat now (isHot). */
  lane?: SlugLane,
): Promise<void> {
  const hot = (lane ?? ((await deps.inbox.isHot(slug)) ? 'hot' : 'urgent')) === 'hot';
  await deps.pendingSlugs.mark(installationId, slug, hot ? 'hot' : 'urgent', since);
  await queueSlugUpdate(deps.queues, installationId, hot);
}

/**
 * The installation's `slug-update` job of one lane, for the slugs marked in it. Always on the realtime
 * queue: a `hot` job that older releases queued on the backfill queue still runs there and takes the
 * same lane's marks, so nothing it waited for is lost.
 */
export async function queueSlugUpdate(
  queues: Pick<Queues, 'add'>,
  installationId: string,
  hot: boolean,
): Promise<void> {
  await queues.add(
    'realtime',
    'slug-update',
    { installationId, ...(hot ? { hot: true } : {}) },
    {
      delay: hot ? HOT_COALESCE_MS : COALESCE_MS,
      // One pending job per installation and lane; one more when it is already running, for marks made
      // after it took its own.
      deduplication: {
        id: `slugs-${jobIdPart(installationId)}-${hot ? 'hot' : 'urgent'}`,
        keepLastIfActive: true,
      },
    },
  );
}
