import type { ReportEventJob } from '../jobs.js';
import type { Pipeline } from '../pipeline.js';
import { jobIdPart } from '../queues.js';
import { scoreChanged, scoreChangedDeps } from '../score-changes/fan-out.js';
import { enqueueSlugUpdate } from '../score-changes/updates.js';

/**
 * `report-event`: a report-service event, fanned out to every installation it concerns. `acceptedAt`: when the
 * webhook accepted it, carried to the update's marks for the event-to-CRM latency.
 */
export async function reportEvent(p: Pipeline, data: ReportEventJob, acceptedAt?: number): Promise<void> {
  // A `score.changed` job of an older release (the inbox fans those out now): its lane by the slug's heat.
  if (data.type === 'score.changed') await scoreChanged(scoreChangedDeps(p), data.slug, acceptedAt);
  else if (data.type === 'alert.fired') await alertFired(p, data, acceptedAt);
  else if (data.type === 'report.completed') await reportCompleted(p, data);
}

/**
 * `alert.fired`: the alert becomes the report's latest, then every linked record is updated through the same
 * coalesced `slug-update` as a score change, so one event writes each record once. The activity (note,
 * Task) is a job of its own per installation that switched it on.
 */
async function alertFired(p: Pipeline, data: ReportEventJob, acceptedAt?: number): Promise<void> {
  if (!data.alert) return;
  const { slugChanges, index, alerts, installations, queues } = p.deps;
  const { line, at, text } = data.alert;
  const newest = await alerts.record(data.slug, { line, at, eventId: data.eventId });
  if (!newest) return;
  await slugChanges.markChanged(data.slug);
  for (const installationId of await index.slugs.installationsForSlug(data.slug)) {
    await enqueueSlugUpdate(p.updateQueue(), installationId, data.slug, acceptedAt);
    const installation = await installations.get(installationId);
    if (!installation?.alertActivity) continue;
    await queues.add(
      'realtime',
      'alert-activity',
      { installationId, slug: data.slug, eventId: data.eventId, line, at, ...(text ? { text } : {}) },
      { jobId: `act-${jobIdPart(installationId)}-${jobIdPart(data.eventId)}` },
    );
  }
}

/**
 * `report.completed`: a record whose own submission the event names is linked at once; every connected
 * installation then looks for unlinked records the new report may fit (`report-completed`).
 */
async function reportCompleted(p: Pipeline, data: ReportEventJob): Promise<void> {
  const { requests, installations, queues, slugChanges } = p.deps;
  // A kept 404 of this slug, and every kept search, no longer says what the service holds (report-reader.ts).
  await slugChanges.markPublished(data.slug);
  const waiting = data.submissionId ? await requests.bySubmission(data.submissionId) : null;
  const direct = waiting?.state === 'pending' ? waiting : null;
  if (direct) {
    // The event names the record's own submission: linked where matching accepts the report, else sent to
    // review with it (pipeline/request-completion.ts).
    await p.enqueueBatch(
      'realtime',
      {
        installationId: direct.installationId,
        batchId: 'request-link',
        mode: 'full',
        recordIds: [direct.recordId],
        origin: { kind: 'request', links: { [direct.recordId]: data.slug } },
      },
      { jobId: `reqlink-${jobIdPart(data.eventId)}` },
    );
  }
  for (const installation of await installations.list()) {
    if (installation.status !== 'connected') continue;
    await queues.add(
      'realtime',
      'report-completed',
      {
        installationId: installation.id,
        slug: data.slug,
        ...(direct?.installationId === installation.id ? { requestedRecordId: direct.recordId } : {}),
      },
      { deduplication: { id: `done-${jobIdPart(installation.id)}-${jobIdPart(data.slug)}` } },
    );
  }
}
