import { fingerprintOf, type RecordState } from '../../src/storage/record-state.js';

/** A record the connector linked to `slug` by itself, with its domain and country as when linked. */
export function autoLinkedState(
  recordId: string,
  slug: string,
  domain: string | null,
  country: string | null,
): RecordState {
  return {
    recordId,
    slug,
    status: 'matched',
    score: 70,
    autoLinked: true,
    unlinkedName: null,
    review: null,
    fingerprint: fingerprintOf({ name: recordId, domain, fields: { slug } }),
    place: { domain, country },
  };
}

/**
 * A record waiting for review with the given candidates (slug and report score each; the name defaults to the
 * slug, the matcher's reason to "same name").
 */
export function reviewState(
  recordId: string,
  candidates: { slug: string; score: number; name?: string; why?: string }[],
): RecordState {
  return {
    recordId,
    slug: null,
    status: 'needs_review',
    score: null,
    autoLinked: false,
    unlinkedName: null,
    review: {
      recordId,
      name: `Company ${recordId}`,
      country: null,
      industry: null,
      candidates: candidates.map((c) => ({
        slug: c.slug,
        name: c.name ?? c.slug,
        score: c.score,
        why: c.why ?? 'same name',
      })),
      at: new Date().toISOString(),
    },
    fingerprint: fingerprintOf({ name: `Company ${recordId}`, domain: null, fields: { slug: null } }),
  };
}
