import { normalizeCountry, normalizeDomain } from './normalize.js';

/**
 * Several records linked by the connector to one report are fine when they are the same company written twice
 * (one with a legal form, one without a country). When they disagree on the domain or the country, one of the
 * links may be a namesake's: the admin page lists them for a person to check. Nothing is unlinked here.
 */

export interface SharedLinkRecord {
  recordId: string;
  domain: string | null;
  country: string | null;
}

export interface SharedLinkConflict {
  slug: string;
  records: SharedLinkRecord[];
  /** What the records disagree on: two or more different known values. */
  differs: Array<'domain' | 'country'>;
}

function distinctKnown(values: Array<string | null>): number {
  return new Set(values.filter((value): value is string => value !== null)).size;
}

export function conflictingSharedLinks(
  groups: ReadonlyArray<{ slug: string; records: readonly SharedLinkRecord[] }>,
): SharedLinkConflict[] {
  return groups.flatMap((group) => {
    const differs: SharedLinkConflict['differs'] = [];
    if (distinctKnown(group.records.map((r) => normalizeDomain(r.domain))) > 1) differs.push('domain');
    if (distinctKnown(group.records.map((r) => normalizeCountry(r.country))) > 1) differs.push('country');
    return differs.length === 0 ? [] : [{ slug: group.slug, records: [...group.records], differs }];
  });
}
