import type { ChangedRecord, CrmChange } from '../../crm/connector.js';
import type { PollCursor } from '../../storage/poll-cursor.js';
import { digestFingerprint, fingerprintOf, sameFingerprint } from '../../storage/record-state.js';
import type { PollJob } from '../jobs.js';
import type { Pipeline } from '../pipeline.js';
import { isPolled } from '../runtime.js';

/**
 * How old the last pass that called the CRM may grow while a healthy change stream makes the scheduled polls
 * skip theirs. A stream may run for weeks, and the poll's cursor and the CRM's log of deletions it reads
 * reach back only so far (about 15 days on the CRM with a stream): a cursor older than that forces a full
 * listing. A pass a day keeps both well inside.
 */
export const POLL_PASS_MAX_AGE_MS = 24 * 3_600_000;

/** `poll`: the change poll of a CRM without webhooks: compares what changed with what was last seen. */
export async function poll(p: Pipeline, job: PollJob): Promise<void> {
  const { installationId } = job;
  const { runtime, index } = p.deps;
  const { connector } = await runtime.open(installationId);
  if (!isPolled(connector)) return;
  const previous = await index.pollCursors.get(installationId);
  if (previous && job.reason !== 'catch-up' && (await streamCovers(p, installationId, previous))) return;
  const {
    records,
    cursor: next,
    changes: removals = [],
    resync,
  } = await connector.listChangedSince(previous?.cursor ?? null);
  // The CRM lost track of deletions since the cursor: a full listing finds what is gone (unlisted-records.ts).
  if (previous && resync) await p.startSync(installationId, 'full', { forgetUnlisted: true });
  // The first poll only sets the cursor: what exists already is the backfill's to process.
  const firstPollAt = previous?.since ?? Date.now();
  if (previous && records.length + removals.length > 0) {
    const changes = await changesFromPoll(p, installationId, records, firstPollAt);
    await p.enqueueCrmChanges(installationId, [...removals, ...changes]);
  }
  await index.pollCursors.set(installationId, { cursor: next, since: firstPollAt, polledAt: Date.now() });
}

/**
 * A scheduled poll has nothing to find while the installation's change stream is healthy (a worker holds it
 * and it says it streams): every change arrives by the stream, which asks for a catch-up poll whenever it
 * cannot say what changed. So a quiet org costs no CRM call, but for one pass a day (POLL_PASS_MAX_AGE_MS).
 */
async function streamCovers(p: Pipeline, installationId: string, previous: PollCursor): Promise<boolean> {
  if (Date.now() - (previous.polledAt ?? 0) >= POLL_PASS_MAX_AGE_MS) return false;
  return p.deps.streamStates.healthy(installationId);
}

async function changesFromPoll(
  p: Pipeline,
  installationId: string,
  records: ChangedRecord[],
  firstPollAt: number,
): Promise<CrmChange[]> {
  const seen = await p.deps.index.fingerprints(
    installationId,
    records.map((r) => r.id),
  );
  const changes: CrmChange[] = [];
  records.forEach((record, i) => {
    const before = seen[i];
    const now = fingerprintOf(record);
    if (before === null || before === undefined) {
      // Not seen and older than polling: a backfill is still on its way to it (its own writes bump the stamp).
      if (Date.parse(record.createdAt) >= firstPollAt) changes.push({ kind: 'created', recordId: record.id });
      return;
    }
    // The index keeps a digest of each part: enough to tell which one changed.
    const nowDigest = digestFingerprint(now);
    if (sameFingerprint(before, nowDigest)) return; // our own write, or a field we do not watch
    if (before.slug !== nowDigest.slug) {
      changes.push({
        kind: 'slugChanged',
        recordId: record.id,
        slug: now.slug || null,
        ...(record.modifiedBy ? { by: record.modifiedBy } : {}),
      });
    } else if (before.name !== nowDigest.name) changes.push({ kind: 'renamed', recordId: record.id });
    else if (before.domain !== nowDigest.domain) changes.push({ kind: 'domainChanged', recordId: record.id });
  });
  return changes;
}
