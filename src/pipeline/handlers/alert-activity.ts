import { alertActivity as activityOf } from '../../alerts/alert-activity.js';
import type { ActivityOutcome } from '../../alerts/alert-store.js';
import { redactSecrets } from '../../log.js';
import type { AlertActivityJob } from '../jobs.js';
import type { Pipeline } from '../pipeline.js';

/**
 * `alert-activity`: one activity per record linked to the alert's report; a retry skips the records already
 * done. What it did (created, failed with the reason, skipped with why) is kept per event and installation for
 * the event log, so an alert does not read "queued" forever.
 */
export async function alertActivity(p: Pipeline, data: AlertActivityJob): Promise<void> {
  const { runtime, index, alerts, installations } = p.deps;
  let crm = (await installations.get(data.installationId))?.crm ?? 'unknown';
  const outcome = (o: Omit<ActivityOutcome, 'crm' | 'at'>) =>
    alerts.recordOutcome(data.eventId, data.installationId, { ...o, crm, at: new Date().toISOString() });
  let created = 0;
  let already = 0;
  try {
    const { connector, installation } = await runtime.open(data.installationId, { urgent: true });
    crm = installation.crm;
    if (!connector.createActivity) {
      await outcome({ state: 'skipped', created, already, reason: 'this CRM has no activities' });
      return;
    }
    const activity = activityOf(data);
    const linked = await index.slugs.recordsForSlug(data.installationId, data.slug);
    const records = await p.mergedInto.resolve(data.installationId, linked);
    if (records.length === 0) {
      await outcome({ state: 'skipped', created, already, reason: 'no record is linked to the report' });
      return;
    }
    const queue = [...records];
    const seen = new Set(records);
    for (let recordId = queue.shift(); recordId !== undefined; recordId = queue.shift()) {
      if (!(await alerts.claimActivity(data.installationId, data.eventId, recordId))) {
        already += 1;
        continue;
      }
      try {
        await connector.createActivity(recordId, activity);
        created += 1;
      } catch (err) {
        await alerts.releaseActivity(data.installationId, data.eventId, recordId);
        // Merged away before the merge's change was seen (a merge that kept the link on the survivor shows
        // it at once): the survivor gets the activity, and later fan-outs find it through the forwarding.
        const survivor = connector.survivorsOf
          ? (await connector.survivorsOf([recordId])).values().next().value
          : undefined;
        if (survivor === undefined) throw err;
        await p.mergedInto.record(data.installationId, [recordId], survivor);
        if (!seen.has(survivor)) {
          seen.add(survivor);
          queue.push(survivor);
        }
      }
    }
    await outcome({ state: 'created', created, already });
  } catch (err) {
    // Kept before the retry: the event log says why now, and a later success replaces it.
    await outcome({
      state: 'failed',
      created,
      already,
      reason: redactSecrets(err instanceof Error ? err.message : String(err)).slice(0, 300),
    }).catch(() => undefined);
    throw err;
  }
}
