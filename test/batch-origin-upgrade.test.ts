import { describe, expect, it } from 'vitest';
import type { LocalCrmRecord } from '../local/system.js';
import {
  freshSlugsOf,
  isPreview,
  matchesWaiting,
  type RecordAsk,
  readScopeOf,
  recordAsks,
  runIdOf,
} from '../src/pipeline/batch/origin.js';
import type { BatchJob } from '../src/pipeline/batch-job.js';
import { parseJobData } from '../src/pipeline/jobs.js';
import { suiteSystem } from './support/local-system.js';
import { failedJobs, queuesIdle, runEnded } from './support/system-state.js';

/**
 * A batch queued by the version before origins (a run id and ten optional flags) must be handled as it was
 * after an upgrade in place: it parses into the origin it meant, and that origin decides what the flags did.
 */

/** The batch payload as the version before origins queued it. */
interface FlagBatch {
  installationId: string;
  runId: string | null;
  batchId: string;
  mode: 'full' | 'incremental' | 'reconcile';
  recordIds: string[];
  readRunId?: string;
  freshSlugs?: string[];
  rematch?: string[];
  links?: Record<string, string>;
  matchRequested?: boolean;
  personSet?: string[];
  adminLinks?: Record<string, string>;
  adminUnlink?: string[];
  release?: string[];
  preview?: boolean;
}

/** What the flags meant, as that version's batch read them (enrich-batch.ts and plan.ts of the time). */
function flagMeaning(job: FlagBatch) {
  const ask = (id: string): RecordAsk => {
    if (job.adminUnlink?.includes(id)) return { kind: 'admin-unlink' };
    const adminSlug = job.adminLinks?.[id];
    if (adminSlug) return { kind: 'admin-link', slug: adminSlug };
    const requested = job.links?.[id];
    if (requested) return { kind: 'request-link', slug: requested };
    if (job.personSet?.includes(id)) return { kind: 'person-set' };
    if (job.rematch?.includes(id)) return { kind: 'rematch-own' };
    if (job.release?.includes(id)) return { kind: 'release' };
    return { kind: 'none' };
  };
  return {
    runId: job.runId,
    readScope: job.runId ?? job.readRunId ?? null,
    fresh: [...(job.freshSlugs ?? [])].sort(),
    preview: job.preview === true,
    matchWaiting: job.matchRequested === true || (job.runId !== null && job.mode === 'full'),
    asks: job.recordIds.map(ask),
  };
}

function meaning(job: BatchJob) {
  const ask = recordAsks(job);
  return {
    runId: runIdOf(job),
    readScope: readScopeOf(job),
    fresh: freshSlugsOf(job).sort(),
    preview: isPreview(job),
    matchWaiting: matchesWaiting(job),
    asks: job.recordIds.map(ask),
  };
}

const base = { installationId: 'hubspot:1', mode: 'full' as const, recordIds: ['11', '12'] };

/** Each origin as the version before queued it (or built it for a batch run in place), and what it becomes. */
const FLAG_BATCHES: { name: string; flags: FlagBatch; origin: BatchJob['origin'] }[] = [
  {
    name: 'a run’s batch',
    flags: { ...base, runId: 'run-1', batchId: '0-0' },
    origin: { kind: 'sync', runId: 'run-1' },
  },
  {
    name: 'an incremental run’s batch',
    flags: { ...base, mode: 'incremental', runId: 'run-1', batchId: '3-1' },
    origin: { kind: 'sync', runId: 'run-1' },
  },
  {
    name: 'a preview run’s batch',
    flags: { ...base, runId: 'run-2', batchId: '0-0', preview: true },
    origin: { kind: 'preview', runId: 'run-2' },
  },
  {
    name: 'the retry of a run’s records',
    flags: { ...base, runId: null, readRunId: 'run-1', batchId: '0-0-retry1' },
    origin: { kind: 'retry', of: { kind: 'sync', runId: 'run-1' } },
  },
  {
    name: 'the refresh after a report request',
    flags: { ...base, runId: null, batchId: 'refresh' },
    origin: { kind: 'refresh' },
  },
  {
    name: 'a requested report published for the record',
    flags: { ...base, runId: null, batchId: 'request-link', links: { '11': 'acme' }, freshSlugs: ['acme'] },
    origin: { kind: 'request', links: { '11': 'acme' } },
  },
  {
    name: 'the retry of a request’s link',
    flags: {
      ...base,
      runId: null,
      batchId: 'request-link-retry2',
      links: { '11': 'acme' },
      freshSlugs: ['acme'],
    },
    origin: { kind: 'retry', of: { kind: 'request', links: { '11': 'acme' } } },
  },
  {
    name: 'a newly published report’s unlinked records',
    flags: { ...base, runId: null, batchId: 'completed-0', matchRequested: true },
    origin: { kind: 'report-published' },
  },
  {
    name: 'an admin’s link on the review queue',
    flags: { ...base, runId: null, batchId: 'review', freshSlugs: ['acme'] },
    origin: { kind: 'review', links: {}, rejected: [], written: 'acme' },
  },
  {
    name: 'an admin’s rejection on the review queue',
    flags: { ...base, runId: null, batchId: 'review', freshSlugs: [], adminUnlink: ['11'] },
    origin: { kind: 'review', links: {}, rejected: ['11'] },
  },
  {
    name: 'review decisions at scale',
    flags: {
      ...base,
      runId: null,
      batchId: 'review-bulk-0',
      adminLinks: { '11': 'acme' },
      adminUnlink: ['12'],
      freshSlugs: ['acme'],
    },
    origin: { kind: 'review', links: { '11': 'acme' }, rejected: ['12'] },
  },
  {
    name: 'an admin’s unlink (or an undone run)',
    flags: { ...base, runId: null, batchId: 'unlink-0', adminUnlink: ['11', '12'] },
    origin: { kind: 'unlink' },
  },
  {
    name: 'a re-match asked for',
    flags: { ...base, runId: null, batchId: 'rematch-0', release: ['11', '12'] },
    origin: { kind: 'rematch' },
  },
  {
    name: 'a slug a person set in the CRM',
    flags: {
      ...base,
      recordIds: ['11'],
      runId: null,
      batchId: 'change-slugChanged',
      freshSlugs: ['acme'],
      personSet: ['11'],
    },
    origin: { kind: 'crm-change', change: 'slugChanged', slug: 'acme' },
  },
  {
    name: 'a renamed record',
    flags: { ...base, recordIds: ['11'], runId: null, batchId: 'change-renamed', rematch: ['11'] },
    origin: { kind: 'crm-change', change: 'renamed' },
  },
  {
    name: 'a merge that carried a link over',
    flags: { ...base, recordIds: ['11'], runId: null, batchId: 'change-merged', freshSlugs: ['acme'] },
    origin: { kind: 'crm-change', change: 'merged', slug: 'acme' },
  },
];

describe('a flag-shaped batch payload after the upgrade', () => {
  it.each(FLAG_BATCHES)(
    '$name parses into its origin and means what its flags meant',
    ({ flags, origin }) => {
      const job = parseJobData('batch', JSON.parse(JSON.stringify(flags)));
      expect(job.origin).toEqual(origin);
      expect(job.recordIds).toEqual(flags.recordIds);
      expect(job.batchId).toBe(flags.batchId);
      expect(job.mode).toBe(flags.mode);
      expect(meaning(job)).toEqual(flagMeaning(flags));
    },
  );

  it('a payload of the current shape parses as it is', () => {
    const current: BatchJob = { ...base, batchId: 'unlink-0', origin: { kind: 'unlink' } };
    expect(parseJobData('batch', JSON.parse(JSON.stringify(current)))).toEqual(current);
  });

  it('a payload of neither shape is refused', () => {
    expect(() => parseJobData('batch', { ...base, batchId: 'x' })).toThrow();
    expect(() => parseJobData('batch', { ...base, batchId: 'x', origin: { kind: 'sync' } })).toThrow();
  });
});

describe('flag-shaped batches waiting in the queue, run by the upgraded worker', () => {
  const system = suiteSystem({ companies: 60 }, { firstRunEnded: true, timeoutMs: 180_000 });

  const records = (): LocalCrmRecord[] => system.recordIds.map((id) => system.crm.record(id)!);
  /** Queues the payload as the version before did: a `batch` job on the realtime queue, as it is. */
  const queueAsBefore = async (flags: Omit<FlagBatch, 'installationId' | 'mode'>) => {
    await system.ctx.queues.realtime.add('batch', {
      installationId: system.installationId,
      mode: 'full',
      ...flags,
    });
    await queuesIdle(system);
  };

  it('unlink, review links, request links and a re-match do what their flags did', async () => {
    const autoLinked = records().filter((r) => r.status === 'matched' && r.linkSource === 'auto');
    expect(autoLinked.length).toBeGreaterThanOrEqual(3);
    const [unlinkTarget, reviewTarget, requestTarget] = autoLinked;
    const unlink = async (record: LocalCrmRecord) => {
      await queueAsBefore({
        runId: null,
        batchId: 'unlink-0',
        recordIds: [record.id],
        adminUnlink: [record.id],
      });
      expect(system.crm.record(record.id)).toMatchObject({
        slug: null,
        status: 'no_match',
        linkSource: 'admin',
      });
    };

    await unlink(unlinkTarget!);
    // The admin's no_match holds through a plain refresh, and is lifted by a re-match.
    await queueAsBefore({ runId: null, batchId: 'refresh', recordIds: [unlinkTarget!.id] });
    expect(system.crm.record(unlinkTarget!.id)).toMatchObject({ status: 'no_match', linkSource: 'admin' });
    await queueAsBefore({
      runId: null,
      batchId: 'rematch-0',
      recordIds: [unlinkTarget!.id],
      release: [unlinkTarget!.id],
    });
    expect(system.crm.record(unlinkTarget!.id)).toMatchObject({
      slug: unlinkTarget!.slug,
      linkSource: 'auto',
    });

    // An admin's link on the review queue: theirs, whatever matching would say.
    const otherSlug = requestTarget!.slug!;
    await queueAsBefore({
      runId: null,
      batchId: 'review-bulk-0',
      recordIds: [reviewTarget!.id],
      adminLinks: { [reviewTarget!.id]: otherSlug },
      adminUnlink: [],
      freshSlugs: [otherSlug],
    });
    expect(system.crm.record(reviewTarget!.id)).toMatchObject({
      slug: otherSlug,
      status: 'matched',
      linkSource: 'admin',
    });

    // A requested report published for a record without a slug, which matching accepts as the record's.
    await unlink(requestTarget!);
    await queueAsBefore({
      runId: null,
      batchId: 'request-link',
      recordIds: [requestTarget!.id],
      links: { [requestTarget!.id]: otherSlug },
      freshSlugs: [otherSlug],
    });
    expect(system.crm.record(requestTarget!.id)).toMatchObject({
      slug: otherSlug,
      status: 'matched',
      linkSource: 'request',
    });
    expect(await failedJobs(system)).toBe(0);
  }, 120_000);

  it('a run’s batch is recorded in its run; the retry of its records, which reads through the run, is not', async () => {
    const runId = await system.ctx.pipeline.startSync(system.installationId, 'full');
    await runEnded(system, runId);
    const recorded = (batchId: string) =>
      system.ctx.redis.hexists(system.ctx.keys.runBatches(runId), batchId);
    const target = records().find((r) => r.status === 'matched')!;
    await queueAsBefore({ runId, batchId: 'late-0', recordIds: [target.id] });
    expect(await recorded('late-0')).toBe(1);
    await queueAsBefore({ runId: null, readRunId: runId, batchId: 'late-0-retry1', recordIds: [target.id] });
    expect(await recorded('late-0-retry1')).toBe(0);
    expect(system.crm.record(target.id)).toMatchObject({ slug: target.slug, status: 'matched' });
    expect(await failedJobs(system)).toBe(0);
  }, 120_000);
});
