import { alertActivity as activityOf } from '../../alerts/alert-activity.js';
import type { AlertActivityJob } from '../jobs.js';
import type { Pipeline } from '../pipeline.js';

/** `alert-activity`: one activity per record linked to the alert's report; a retry skips the records already done. */
export async function alertActivity(p: Pipeline, data: AlertActivityJob): Promise<void> {
  const { runtime, index, alerts } = p.deps;
  const { connector } = await runtime.open(data.installationId, { urgent: true });
  if (!connector.createActivity) return;
  const activity = activityOf(data);
  const linked = await index.slugs.recordsForSlug(data.installationId, data.slug);
  for (const recordId of await p.mergedInto.resolve(data.installationId, linked)) {
    if (!(await alerts.claimActivity(data.installationId, data.eventId, recordId))) continue;
    try {
      await connector.createActivity(recordId, activity);
    } catch (err) {
      await alerts.releaseActivity(data.installationId, data.eventId, recordId);
      throw err;
    }
  }
}
