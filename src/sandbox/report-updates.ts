import type { EventDispatcher, SandboxEvent } from './event-dispatcher.js';
import type { FixtureReport } from './fixtures.js';
import type { ReportStore } from './report-store.js';

export interface ReportUpdate {
  report: FixtureReport;
  events: SandboxEvent[];
}

/**
 * A fixture change and the event a real service would send for it: `report.completed` when a report becomes
 * published, `score.changed` when a published report's score or verification changes. Unpublishing sends
 * nothing, as no such event kind is documented.
 */
export function applyReportUpdate(
  store: ReportStore,
  events: EventDispatcher,
  slug: string,
  patch: unknown,
  /** More for the event's `data`, such as the submission a report answers. */
  eventData: Record<string, unknown> = {},
): ReportUpdate {
  const change = store.update(slug, patch);
  const { before, after } = change;
  const emitted: SandboxEvent[] = [];
  if (after.published && !before?.published) {
    emitted.push(
      events.emit('report.completed', {
        ...eventData,
        slug,
        name: after.name,
        score: { overall: after.score.overall, band: after.score.band },
      }),
    );
  } else if (after.published && (change.scoreChanged || change.verificationChanged)) {
    emitted.push(
      events.emit('score.changed', {
        slug,
        score: { overall: after.score.overall, band: after.score.band, scored_at: after.score.scored_at },
        previous_score: before ? { overall: before.score.overall, band: before.score.band } : null,
        verification: after.verification ?? null,
      }),
    );
  }
  return { report: after, events: emitted };
}
