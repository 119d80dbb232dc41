import type { CardData } from './card-data.js';
import type { CardState } from './ReportCard.js';

/**
 * One example of every state the card can be in, for its tests and for a preview page. Not part of the HubSpot
 * project (the generator copies only the card's own files).
 */

const base: CardData = {
  companyId: '1001',
  status: 'matched',
  report: null,
  verification: null,
  previous: null,
  alert: null,
  linkSource: null,
  review: null,
  request: null,
  syncedAt: '2026-11-20T08:00:00.000Z',
};

const linkedData: CardData = {
  ...base,
  report: {
    slug: 'northwind-traders',
    score: 72,
    band: 'Strong',
    scoredAt: '2026-11-03T10:00:00.000Z',
    pillars: [
      { name: 'Governance', score: 80, weight: 0.4 },
      { name: 'Operations', score: 66.5, weight: 0.35 },
      { name: 'Disclosure', score: 68, weight: 0.25 },
    ],
    url: 'https://reports.example.com/r/northwind-traders',
  },
  verification: { verdict: 'confirmed', verifiedScore: 71, verifiedAt: '2026-11-05T09:00:00.000Z' },
  // The same facts as the alert: the score fell 12 points to 72 with the scoring of 3 Nov.
  previous: { score: 84, changedAt: '2026-11-03T10:00:00.000Z' },
  alert: {
    text: 'High alert, score drop: Score fell — the overall score dropped 12 points',
    at: '2026-11-04T12:00:00.000Z',
  },
  linkSource: 'auto',
};

export const CARD_SAMPLES = {
  linked: { kind: 'data', data: linkedData },
  linked_by_person_unsafe_link: {
    kind: 'data',
    data: {
      ...linkedData,
      linkSource: 'person',
      alert: null,
      report: { ...linkedData.report!, url: 'javascript:alert(1)' },
    },
  },
  no_verification: { kind: 'data', data: { ...linkedData, verification: null, alert: null } },
  no_previous: { kind: 'data', data: { ...linkedData, previous: null, alert: null, linkSource: 'admin' } },
  needs_review: {
    kind: 'data',
    data: {
      ...base,
      status: 'needs_review',
      review: {
        candidates: [
          { slug: 'acme-gmbh', name: 'Acme GmbH', place: 'Germany', industry: 'Manufacturing', score: 64 },
          { slug: 'acme-ltd', name: 'Acme Ltd', place: 'United Kingdom', industry: 'Retail', score: 58 },
        ],
      },
    },
  },
  needs_review_tied: {
    kind: 'data',
    data: {
      ...base,
      status: 'needs_review',
      review: {
        candidates: [
          { slug: 'acme-gmbh', name: 'Acme GmbH', place: 'Germany', industry: 'Manufacturing', score: 64 },
          { slug: 'acme-ag', name: 'Acme AG', place: 'Switzerland', industry: null, score: 64 },
        ],
        tied: true,
      },
    },
  },
  no_match: { kind: 'data', data: { ...base, status: 'no_match' } },
  no_match_requested: {
    kind: 'data',
    data: {
      ...base,
      status: 'no_match',
      request: { state: 'cancelled', requestedAt: '2026-11-01T00:00:00.000Z' },
    },
  },
  requested: {
    kind: 'data',
    data: {
      ...base,
      status: 'requested',
      linkSource: null,
      request: { state: 'pending', requestedAt: '2026-11-19T15:00:00.000Z' },
    },
  },
  not_published: { kind: 'data', data: { ...base, status: 'not_published', linkSource: 'auto' } },
  error: { kind: 'data', data: { ...base, status: 'error', linkSource: 'auto' } },
  never_synced: { kind: 'data', data: { ...base, status: null, syncedAt: null } },
  unreachable: { kind: 'unreachable' },
  refused: { kind: 'refused' },
  not_found: { kind: 'not_found' },
  busy: { kind: 'busy', retryAfterSeconds: 42 },
  loading: { kind: 'loading' },
} satisfies Record<string, CardState>;

export type CardSampleName = keyof typeof CARD_SAMPLES;
