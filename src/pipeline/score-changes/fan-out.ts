import { setTimeout as sleep } from 'node:timers/promises';
import type { SlugChanges } from '../../storage/slug-changes.js';
import type { SlugIndex } from '../../storage/slug-index.js';
import type { Pipeline } from '../pipeline.js';
import type { MarkedSlug, ScoreChangeInbox } from './inbox.js';
import type { SlugLane } from './pending-slugs.js';
import { enqueueSlugUpdate } from './updates.js';

const DRAIN_TAKE = 100;
const DRAIN_ROUNDS = 50;
const STORM_DRAIN_PAUSE_MS = 1_000;
/** Between two takes, single changes (marks of slugs that are not hot) are fanned out this often. */
const SINGLES_POLL_MS = 100;

/** What the fan-out works with, and nothing else of the pipeline. */
export interface FanOutDeps {
  inbox: Pick<ScoreChangeInbox, 'leftovers' | 'take' | 'done' | 'stranded'>;
  /** One mark to every installation holding its slug (report-event.ts#scoreChanged). */
  scoreChanged: (mark: MarkedSlug) => Promise<void>;
  /** Queues the next `score-changes` job (updates.ts#kickScoreChanges). */
  kickScoreChanges: () => Promise<void>;
}

/**
 * `score-changes`: the fan-out of the score-change inbox's marks: a killed fan-out's leftovers first, then
 * the marks oldest first, each through `scoreChanged` (one coalesced `slug-update` per installation linked to
 * the slug, in the lane the mark carries). After DRAIN_ROUNDS takes it hands over to a new job, so a
 * continuous storm never keeps one job running forever.
 */
export async function drainScoreChanges(deps: FanOutDeps): Promise<void> {
  const { inbox } = deps;
  // A take's marks are fanned out together: one after another, each waited its turn behind every request
  // the storm had queued on this event loop.
  const fanOut = (marks: MarkedSlug[]) =>
    Promise.all(
      marks.map(async (mark) => {
        await deps.scoreChanged(mark);
        await inbox.done(mark);
      }),
    );
  await fanOut(await inbox.leftovers());
  for (let round = 0; round < DRAIN_ROUNDS; round++) {
    const marks = await inbox.take(DRAIN_TAKE);
    if (marks.length === 0) return;
    await fanOut(marks);
    // What arrives meanwhile coalesces into one mark per slug: a storm is fanned out once a second, not once
    // per event (its updates coalesce over HOT_COALESCE_MS anyway), which leaves the event loop to the
    // acknowledgements. The pause does not depend on the take: it was shorter after a take that held a single
    // change or a mark of few events, and under load a storm's marks held few events, so the storm was fanned
    // out 2-6 times a second. A single change is not held for the pause: right after a storm's take
    // it waited up to a second here, the most of its way to the CRM. Only the single changes' marks are taken
    // meanwhile.
    const pauseEnds = Date.now() + STORM_DRAIN_PAUSE_MS;
    for (let left = pauseEnds - Date.now(); left > 0; left = pauseEnds - Date.now()) {
      await sleep(Math.min(SINGLES_POLL_MS, left));
      const singles = await inbox.take(DRAIN_TAKE, 'singles');
      if (singles.length > 0) await fanOut(singles);
    }
  }
  await deps.kickScoreChanges();
}

/**
 * The periodic `score-changes` job (Schedules.scheduleScoreChangeSweep), on the schedule lane: it queues a
 * fan-out on the realtime lane when marks are stranded (an ingest died between its accept and its kick, or a
 * fan-out died and was not taken again), and fans out nothing itself. Draining here like the realtime job would,
 * under a steady flow of events, run for a minute on the schedule lane, whose killed jobs come back only
 * after 10 s + 5 s, and as its takes keep the kick mark no realtime fan-out would be queued meanwhile: events
 * after a killed worker would wait 15 s.
 */
export async function sweepScoreChanges(deps: Pick<FanOutDeps, 'inbox' | 'kickScoreChanges'>): Promise<void> {
  if (await deps.inbox.stranded()) await deps.kickScoreChanges();
}

/** What a score change's fan-out works with, and nothing else of the pipeline. */
export interface ScoreChangedDeps {
  slugChanges: Pick<SlugChanges, 'markChanged'>;
  slugs: Pick<SlugIndex, 'installationsForSlug'>;
  /** Marks the slug pending for one installation and queues its update (updates.ts#enqueueSlugUpdate). */
  enqueueSlugUpdate: (installationId: string, slug: string, since?: number, lane?: SlugLane) => Promise<void>;
}

/**
 * Every installation linked to the slug updates its records (one coalesced `slug-update` each), in the lane
 * the inbox decided when it accepted the change.
 */
export async function scoreChanged(
  deps: ScoreChangedDeps,
  slug: string,
  acceptedAt?: number,
  lane?: SlugLane,
): Promise<void> {
  // Before the fan-out: a batch that read this report earlier and links a record after the fan-out
  // looked at the index sees the mark and asks for this update again (see BatchOutcome.staleSlugs).
  await deps.slugChanges.markChanged(slug);
  for (const installationId of await deps.slugs.installationsForSlug(slug)) {
    await deps.enqueueSlugUpdate(installationId, slug, acceptedAt, lane);
  }
}

/** The fan-out's dependencies out of the pipeline's. */
export function scoreChangedDeps(p: Pipeline): ScoreChangedDeps {
  const { slugChanges, index } = p.deps;
  return {
    slugChanges,
    slugs: index.slugs,
    enqueueSlugUpdate: (...args) => enqueueSlugUpdate(p.updateQueue(), ...args),
  };
}
