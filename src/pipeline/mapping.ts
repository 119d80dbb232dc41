import type { ValueGrain } from '../crm/value-grain.js';
import {
  FIELDS,
  type FieldKey,
  type FieldValue,
  type FieldValues,
  fieldByKey,
  type MatchStatus,
} from '../fields.js';
import type { Pillar, Report } from '../reports/schemas.js';

/**
 * From a report to the values of the connector's fields, and the comparison that decides whether a record
 * needs a write at all. Only the connector's own fields are ever produced here.
 */

export type DesiredValues = Partial<Record<FieldKey, FieldValue>>;

/**
 * The fields that carry report data: everything but the link and who made it, the status, the sync stamp
 * and the previous score (history outlives the link it came from).
 */
const NOT_REPORT_DATA: readonly FieldKey[] = [
  'slug',
  'linkSource',
  'matchStatus',
  'syncedAt',
  'scorePrevious',
];
export const REPORT_DATA_KEYS: readonly FieldKey[] = FIELDS.map((f) => f.key).filter(
  (k) => !NOT_REPORT_DATA.includes(k),
);

/** "Team 80 (40%); Market 70.5 (35%)": readable in a CRM field, numbers as received. */
export function pillarsText(pillars: readonly Pillar[]): string | null {
  if (pillars.length === 0) return null;
  return pillars.map((p) => `${p.name} ${p.score} (${formatPercent(p.weight)})`).join('; ');
}

function formatPercent(weight: number): string {
  // Round away floating noise (0.35 * 100 = 35.00000000000001) without hiding real precision.
  return `${Number((weight * 100).toPrecision(12))}%`;
}

function isoOrNull(value: string | undefined | null): string | null {
  if (!value) return null;
  const t = Date.parse(value);
  return Number.isNaN(t) ? null : new Date(t).toISOString();
}

export function valuesForReport(report: Report): DesiredValues {
  const v = report.verification ?? null;
  return {
    score: report.score.overall,
    band: report.score.band === '' ? null : report.score.band,
    scoredAt: isoOrNull(report.score.scored_at),
    pillars: pillarsText(report.score.pillars),
    verifiedScore: v ? v.verified_score : null,
    verdict: v && v.verdict !== '' ? v.verdict : null,
    verifiedAt: v ? isoOrNull(v.signed_at) : null,
    reportUrl: report.report_url,
    matchStatus: 'matched',
  };
}

/** Every report field emptied, with the given status: not published, no match, needs review. */
export function clearedValues(status: MatchStatus): DesiredValues {
  const values: DesiredValues = { matchStatus: status };
  for (const key of REPORT_DATA_KEYS) values[key] = null;
  return values;
}

/**
 * Equality as the CRM stores it (its provider's `limits.valueGrain`): numbers to the CRM's decimals, instants
 * regardless of format and to the CRM's grain, so a value that reads back rounded is not written again.
 */
export function sameValue(
  key: FieldKey,
  current: FieldValue | undefined,
  desired: FieldValue,
  grain: ValueGrain,
): boolean {
  const a = current ?? null;
  if (a === null || desired === null) return a === desired || (a === '' && desired === null);
  const kind = fieldByKey(key).kind;
  if (kind === 'number') {
    const x = typeof a === 'number' ? a : Number(a);
    const y = typeof desired === 'number' ? desired : Number(desired);
    return (
      Number.isFinite(x) && Number.isFinite(y) && x.toFixed(grain.decimals) === y.toFixed(grain.decimals)
    );
  }
  if (kind === 'datetime') {
    const x = Date.parse(String(a));
    const y = Date.parse(String(desired));
    return (
      Number.isFinite(x) &&
      Number.isFinite(y) &&
      Math.floor(x / grain.instantMs) === Math.floor(y / grain.instantMs)
    );
  }
  return String(a) === String(desired);
}

/** The subset of `desired` that differs from what the record holds; empty when nothing would change. */
export function changedValues(
  current: Partial<FieldValues>,
  desired: DesiredValues,
  grain: ValueGrain,
): DesiredValues {
  const changes: DesiredValues = {};
  for (const [key, value] of Object.entries(desired) as [FieldKey, FieldValue][]) {
    if (key === 'syncedAt') continue;
    if (!sameValue(key, current[key], value, grain)) changes[key] = value;
  }
  return changes;
}
