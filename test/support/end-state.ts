import { HUBSPOT_FIELDS } from '../../connectors/hubspot/fields/field-names.js';
import type { LocalSystem } from '../../local/system.js';

/** End-state checks that go past `wrongRecords`: the written values equal the sandbox's current report. */

// Left out of the comparison: when the connector last wrote, and the score before its last change, which is
// whichever intermediate version a run happened to write while scores moved (history, not end state).
const RUN_DEPENDENT = new Set(
  HUBSPOT_FIELDS.filter((f) => f.key === 'syncedAt' || f.key === 'scorePrevious').map((f) => f.hubspot),
);
const OWN_PROPERTIES = HUBSPOT_FIELDS.map((f) => f.hubspot).filter((p) => !RUN_DEPENDENT.has(p));

/** Records linked to a published report whose score or scored_at differ from what the sandbox serves now. */
export function staleRecords(system: LocalSystem): string[] {
  const stale: string[] = [];
  system.recordIds.forEach((id) => {
    const p = system.hubspot.getCompany(id)?.properties ?? {};
    if (p.report_match_status !== 'matched' || !p.report_slug) return;
    const report = system.sandbox.getReport(p.report_slug);
    if (!report?.published) {
      stale.push(`${id}: matched to ${p.report_slug}, which is not published`);
      return;
    }
    const scoreOk = Number(p.report_score).toFixed(6) === report.score.overall.toFixed(6);
    // To the second, as the connector compares instants (Salesforce keeps DateTime to the second): a re-score
    // within the same second with the same score is no change to write.
    const second = (at: string | undefined) => Math.floor(Date.parse(at ?? '') / 1000);
    const timeOk = second(p.report_scored_at) === second(report.score.scored_at);
    if (!scoreOk || !timeOk) {
      stale.push(
        `${id} (${p.report_slug}): CRM ${p.report_score} @ ${p.report_scored_at}, sandbox ${report.score.overall} @ ${report.score.scored_at}`,
      );
    }
  });
  return stale;
}

/** The connector's own properties of every record (without the run-dependent ones), to compare two systems. */
export function connectorFields(system: LocalSystem): Record<string, Record<string, string>> {
  const out: Record<string, Record<string, string>> = {};
  for (const id of system.recordIds) {
    const p = system.hubspot.getCompany(id)?.properties ?? {};
    out[id] = Object.fromEntries(OWN_PROPERTIES.filter((k) => p[k] !== undefined).map((k) => [k, p[k]!]));
  }
  return out;
}
