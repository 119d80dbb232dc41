import {
  CARD_LINK_SOURCES,
  CARD_MATCH_STATUSES,
  type CardData,
  type CardLinkSource,
  type CardMatchStatus,
  type CardPillar,
} from './card-data.js';
import { CARD_PROPERTY_NAMES } from './card-property-names.js';

/**
 * The card's data from the connector's own properties on a company, as the seller's HubSpot holds them. The
 * card reads them through HubSpot (`fetchCrmObjectProperties`, with the viewing user's rights), so what it
 * shows needs no identity of its own; the connector's sign-in page builds the same from its CRM read. The
 * property names come from card-property-names.ts, which the manifest generator writes from the field table:
 * this folder is copied into the HubSpot project and imports nothing from the rest of the repository.
 */

export type CardFieldKey = keyof typeof CARD_PROPERTY_NAMES;
export type CardFieldValues = Partial<Record<CardFieldKey, string | number | null | undefined>>;

function text(value: string | number | null | undefined): string | null {
  if (value === null || value === undefined) return null;
  const s = String(value).trim();
  return s === '' ? null : s;
}

function num(value: string | number | null | undefined): number | null {
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

function oneOf<T extends string>(list: readonly T[], value: string | null): T | null {
  return value !== null && (list as readonly string[]).includes(value) ? (value as T) : null;
}

/** The card's data from the record's fields alone: no review candidates, no request (the connector's). */
export function cardDataFromFields(companyId: string, f: CardFieldValues): CardData {
  const status = oneOf<CardMatchStatus>(CARD_MATCH_STATUSES, text(f.matchStatus));
  const slug = text(f.slug);
  const scoredAt = text(f.scoredAt);
  const verdict = text(f.verdict);
  const previous = num(f.scorePrevious);
  const alert = text(f.alert);
  return {
    companyId,
    status,
    report: slug
      ? {
          slug,
          score: num(f.score),
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
    linkSource: oneOf<CardLinkSource>(CARD_LINK_SOURCES, text(f.linkSource)),
    review: null,
    request: null,
    syncedAt: text(f.syncedAt),
  };
}

/** The card's data from HubSpot's answer to a property read (property name -> value). */
export function cardDataFromProperties(
  companyId: string,
  properties: Readonly<Record<string, string | null | undefined>>,
): CardData {
  const fields: CardFieldValues = {};
  for (const [key, name] of Object.entries(CARD_PROPERTY_NAMES) as [CardFieldKey, string][]) {
    fields[key] = properties[name];
  }
  return cardDataFromFields(companyId, fields);
}
