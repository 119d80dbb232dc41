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
