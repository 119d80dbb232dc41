import { createHash } from 'node:crypto';
import { normalizeCountry, normalizeDomain } from './normalize.js';

/**
 * Several records linked by the connector to one report are fine when they are the same company written twice
 * (one with a legal form, one without a country). When they disagree on the domain or the country, one of the
 * links may be a namesake's: the admin page lists them for a person to check. Nothing is unlinked here.
 *
 * The link index does not keep the domain and country themselves (they would cost bytes on every record), only a short
 * digest of each as normalised when the record was linked (`placeDigest`): enough to tell that records on one
 * report disagree. The admin page reads the values it shows from the CRM.
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

/** An auto-linked record's place as the index keeps it: digests of the normalised values, null where unknown. */
export interface PlaceDigest {
  domain: string | null;
  country: string | null;
}

/** Characters of a domain's digest (18 bits: two different domains look alike once in 262,144). */
export const DOMAIN_DIGEST_LENGTH = 3;
/** Characters of a country's digest (12 bits; a report's records span a handful of countries at most). */
export const COUNTRY_DIGEST_LENGTH = 2;

function digest(value: string | null, length: number): string | null {
  return value === null ? null : createHash('sha1').update(value).digest('base64url').slice(0, length);
}

export function placeDigest(place: { domain: string | null; country: string | null }): PlaceDigest {
  return {
    domain: digest(normalizeDomain(place.domain), DOMAIN_DIGEST_LENGTH),
    country: digest(normalizeCountry(place.country), COUNTRY_DIGEST_LENGTH),
  };
}

function distinctKnown(values: Array<string | null>): number {
  return new Set(values.filter((value): value is string => value !== null)).size;
}

function differences(
  domains: Array<string | null>,
  countries: Array<string | null>,
): SharedLinkConflict['differs'] {
  const differs: SharedLinkConflict['differs'] = [];
  if (distinctKnown(domains) > 1) differs.push('domain');
  if (distinctKnown(countries) > 1) differs.push('country');
  return differs;
}

/** Conflicts among records whose domain and country are known as text. */
export function conflictingSharedLinks(
  groups: ReadonlyArray<{ slug: string; records: readonly SharedLinkRecord[] }>,
): SharedLinkConflict[] {
  return groups.flatMap((group) => {
    const differs = differences(
      group.records.map((r) => normalizeDomain(r.domain)),
      group.records.map((r) => normalizeCountry(r.country)),
    );
    return differs.length === 0 ? [] : [{ slug: group.slug, records: [...group.records], differs }];
  });
}

/** A report whose auto-linked records disagree, told from their place digests; the values are not known yet. */
export interface DigestConflict {
  slug: string;
  recordIds: string[];
  differs: SharedLinkConflict['differs'];
}

/**
 * Conflicts among records known by their place digests (the link index's). A record whose state holds no digests
 * (its place was unknown, it inherited its link in a merge, or its state is in an index format without them until
 * the upgrade's full sync writes it) disagrees with nobody.
 */
export function conflictingPlaceDigests(
  groups: ReadonlyArray<{
    slug: string;
    records: ReadonlyArray<{ recordId: string; place: PlaceDigest | null }>;
  }>,
): DigestConflict[] {
  return groups.flatMap((group) => {
    const differs = differences(
      group.records.map((r) => r.place?.domain ?? null),
      group.records.map((r) => r.place?.country ?? null),
    );
    return differs.length === 0
      ? []
      : [{ slug: group.slug, recordIds: group.records.map((r) => r.recordId), differs }];
  });
}
