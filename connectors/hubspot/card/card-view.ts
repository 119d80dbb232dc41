import type { RecordCardSource } from '../../../src/crm/record-card.js';
import type { FieldValue } from '../../../src/fields.js';
import { linkSourceOf, MATCH_STATUSES, type MatchStatus } from '../../../src/fields.js';
import { topTied } from '../../../src/storage/review-ties.js';
import type { CardData, CardPillar } from './ui/card-data.js';

/**
 * The card's data from a company as HubSpot holds it now: the connector's own properties on the record (what
 * the seller would otherwise read in the property list), its review candidates and its report request.
 */

function text(value: FieldValue | undefined): string | null {
  if (value === null || value === undefined) return null;
  const s = String(value).trim();
  return s === '' ? null : s;
}

function num(value: FieldValue | undefined): number | null {
  const s = text(value);
  if (s === null) return null;
  const n = Number(s);
  return Number.isFinite(n) ? n : null;
}

/** `report_pillars` as written (`Governance 80 (40%); Operations 66.5 (35%)`) back into pillars. */
export function parsePillars(value: string | null): CardPillar[] {
  if (!value) return [];
  const out: CardPillar[] = [];
  for (const part of value.split(';')) {
    const m = /^\s*(.+?)\s+(-?\d+(?:\.\d+)?)(?:\s+\((\d+(?:\.\d+)?)%\))?\s*$/.exec(part);
    if (!m) continue;
    out.push({ name: m[1]!, score: Number(m[2]), weight: m[3] === undefined ? null : Number(m[3]) / 100 });
  }
  return out;
}

/** Only http and https addresses are links; anything else a person typed into `report_url` is left out. */
export function safeReportUrl(value: string | null): string | null {
  if (!value) return null;
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.toString() : null;
  } catch {
    return null;
  }
}

function statusOf(value: string | null): MatchStatus | null {
  return value !== null && (MATCH_STATUSES as readonly string[]).includes(value)
    ? (value as MatchStatus)
    : null;
}

export function cardDataOf({ record, review, request }: RecordCardSource): CardData {
  const f = record.fields;
  const status = statusOf(text(f.matchStatus));
  const slug = text(f.slug);
  const score = num(f.score);
  const scoredAt = text(f.scoredAt);
  const verdict = text(f.verdict);
  const previous = num(f.scorePrevious);
  const alert = text(f.alert);
  return {
    companyId: record.id,
    status,
    report: slug
      ? {
          slug,
          score,
          band: text(f.band),
          scoredAt,
          pillars: parsePillars(text(f.pillars)),
          url: safeReportUrl(text(f.reportUrl)),
        }
      : null,
    verification: verdict
      ? { verdict, verifiedScore: num(f.verifiedScore), verifiedAt: text(f.verifiedAt) }
      : null,
    previous: previous === null ? null : { score: previous, changedAt: scoredAt },
    alert: alert ? { text: alert, at: text(f.alertAt) } : null,
    linkSource: linkSourceOf(text(f.linkSource)),
    review:
      status === 'needs_review' && review
        ? {
            candidates: review.candidates.map((c) => ({
              slug: c.slug,
              name: c.name,
              place: c.geography ?? null,
              industry: c.industry ?? null,
              score: c.score ?? null,
              // Items kept before reasons were kept have none; the card then shows none.
              ...(c.why ? { why: c.why } : {}),
            })),
            tied: topTied(review),
          }
        : null,
    request: request ? { state: request.state, requestedAt: request.requestedAt } : null,
    syncedAt: text(f.syncedAt),
  };
}
