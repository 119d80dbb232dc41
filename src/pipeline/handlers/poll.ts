import type { ChangedRecord, CrmChange } from '../../crm/connector.js';
import { digestFingerprint, fingerprintOf, sameFingerprint } from '../../storage/record-state.js';
import type { PollJob } from '../jobs.js';
import type { Pipeline } from '../pipeline.js';
import { isPolled } from '../runtime.js';

/** `poll`: the change poll of a CRM without webhooks: compares what changed with what was last seen. */
export async function poll(p: Pipeline, { installationId }: PollJob): Promise<void> {
  const { runtime, index } = p.deps;
  const { connector } = await runtime.open(installationId);
  if (!isPolled(connector)) return;
  const previous = await index.pollCursors.get(installationId);
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
  await index.pollCursors.set(installationId, { cursor: next, since: firstPollAt });
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
