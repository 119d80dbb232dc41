import { createHash } from 'node:crypto';
import type { MatchStatus } from '../fields.js';
import {
  COUNTRY_DIGEST_LENGTH,
  DOMAIN_DIGEST_LENGTH,
  type PlaceDigest,
  placeDigest,
} from '../matching/shared-links.js';
import type { RedisClient } from '../redis.js';
import type { Keys } from './keys.js';
import { scanLinearHash } from './linear-hash.js';
import { escapePart, unescapePart } from './part-escape.js';
import type { ReviewItem } from './review-codec.js';

/**
 * A record's state as the connector keeps it (storage/link-index.ts writes it): one short string,
 * `seq|slug|status|score|auto|fingerprint|unlinked name`, in a linear-hash map of compact buckets. An auto-link
 * keeps in its `auto` part a digest of the record's domain and country when linked (`placeDigest`, what tells
 * records on one report apart), not the values. The Lua scripts read its parts by place
 * (lua/lib/record-state.lua); this module packs and reads the whole.
 */

export interface RecordState {
  recordId: string;
  slug: string | null;
  status: MatchStatus | null;
  score: number | null;
  autoLinked: boolean;
  /** Normalised name for unlinked records (report.completed), null when linked. */
  unlinkedName: string | null;
  review: ReviewItem | null;
  /** name/domain/slug fingerprint for change polling. */
  fingerprint: Fingerprint;
  /** The record's domain and country: a digest of each is kept while the link is the connector's own. */
  place?: LinkPlace;
}

export interface LinkPlace {
  domain: string | null;
  country: string | null;
}

/** What the change poll compares to tell a rename or a hand-set slug from the connector's own writes. */
export interface Fingerprint {
  name: string;
  domain: string;
  slug: string;
}

/**
 * A fingerprint as kept: a short digest of each part (3 base64url characters, 18 bits, of its SHA-1; `.` for an
 * empty part, which many records' domains are). The poll only asks whether each part changed; a change goes
 * unseen when its two digests collide, one in 262,144 changes, and the daily reconcile then writes the record.
 */
export interface FingerprintDigest {
  name: string;
  domain: string;
  slug: string;
}

/** A record's packed state, parsed (`packState` writes it). */
export interface StoredState {
  seq: number;
  slug: string | null;
  status: MatchStatus | null;
  score: number | null;
  /** The slug the connector linked itself, when it did. */
  autoSlug: string | null;
  /** The digests of the auto-linked record's place when linked; null when not known. */
  place: PlaceDigest | null;
  fingerprint: FingerprintDigest | null;
  unlinkedName: string | null;
}

/** One character per status in the packed state. */
export const STATUS_CODES: Record<MatchStatus, string> = {
  matched: 'm',
  needs_review: 'r',
  no_match: 'n',
  not_published: 'p',
  requested: 'q',
  error: 'e',
};
const STATUS_OF_CODE = new Map(Object.entries(STATUS_CODES).map(([s, c]) => [c, s as MatchStatus]));

const FINGERPRINT_DIGEST_LENGTH = 3;
/** A fingerprint part's digest when empty. */
const EMPTY_PART = '.';
/** The 4-character digest of an empty part, as states with 4-character digests hold it. */
const FOUR_CHARACTER_EMPTY_PART = createHash('sha1').update('').digest('base64url').slice(0, 4);

function shortDigest(value: string): string {
  if (value === '') return EMPTY_PART;
  return createHash('sha1').update(value).digest('base64url').slice(0, FINGERPRINT_DIGEST_LENGTH);
}

/**
 * The stored fingerprint: the name's and the domain's digests, then the slug's when it is not the state's slug.
 * A state with 4-character digests (8 or 12 in all, a length the 3-character form never has) reads as their
 * first 3, which is what the 3-character form keeps of the same SHA-1.
 */
function readFingerprint(fp: string, stateSlug: string): FingerprintDigest | null {
  if (fp.length === 8 || fp.length === 12) {
    const four = (part: string) =>
      part === FOUR_CHARACTER_EMPTY_PART ? EMPTY_PART : part.slice(0, FINGERPRINT_DIGEST_LENGTH);
    return {
      name: four(fp.slice(0, 4)),
      domain: four(fp.slice(4, 8)),
      slug: fp.length === 12 ? four(fp.slice(8)) : shortDigest(stateSlug),
    };
  }
  const parts: string[] = [];
  let at = 0;
  for (let i = 0; i < 3 && at < fp.length; i += 1) {
    const size = fp[at] === EMPTY_PART ? 1 : FINGERPRINT_DIGEST_LENGTH;
    parts.push(fp.slice(at, at + size));
    at += size;
  }
  const [name, domain, slug] = parts;
  if (name === undefined || domain === undefined || at !== fp.length) return null;
  return { name, domain, slug: slug ?? shortDigest(stateSlug) };
}

export function digestFingerprint(f: Fingerprint): FingerprintDigest {
  return { name: shortDigest(f.name), domain: shortDigest(f.domain), slug: shortDigest(f.slug) };
}

export function fingerprintOf(record: {
  name: string | null;
  domain: string | null;
  fields: { slug?: unknown };
}): Fingerprint {
  return {
    name: record.name ?? '',
    domain: record.domain ?? '',
    slug: typeof record.fields.slug === 'string' ? record.fields.slug : '',
  };
}

export function sameFingerprint(a: FingerprintDigest, b: FingerprintDigest): boolean {
  return a.name === b.name && a.domain === b.domain && a.slug === b.slug;
}

/**
 * Everything but the seq (the script keeps the stored one): `slug|status|score|auto|fingerprint|name`, empty
 * parts at the end left out. The fingerprint is the name's and domain's digests, then the slug's only when it
 * is not the record's linked slug (it nearly always is, or both are empty).
 */
export function packState(s: RecordState): string {
  const slug = s.slug ? escapePart(s.slug) : '';
  const fp = digestFingerprint(s.fingerprint);
  const parts = [
    slug,
    s.status ? STATUS_CODES[s.status] : '',
    s.score !== null ? String(s.score) : '',
    s.autoLinked && s.slug ? packAuto(s.place) : '',
    fp.name + fp.domain + (s.fingerprint.slug === (s.slug ?? '') ? '' : fp.slug),
    s.unlinkedName !== null ? escapePart(s.unlinkedName) : '',
  ];
  while (parts.length > 0 && parts[parts.length - 1] === '') parts.pop();
  return parts.join('|');
}

export function unpackState(value: string): StoredState {
  const [seq = '', slugPart = '', status = '', score = '', auto = '', fp = '', name] = value.split('|');
  const slug = slugPart ? unescapePart(slugPart) : null;
  const scoreNumber = score === '' ? Number.NaN : Number(score);
  const own = OWN_AUTO_LINK.exec(auto);
  return {
    seq: seq ? Number.parseInt(seq, 36) : 0,
    slug,
    status: STATUS_OF_CODE.get(status) ?? null,
    score: Number.isFinite(scoreNumber) ? scoreNumber : null,
    autoSlug: own ? slug : auto.startsWith('=') ? unescapePart(auto.slice(1)) : null,
    place: own?.[1] && own[2] ? { domain: unknownDigest(own[1]), country: unknownDigest(own[2]) } : null,
    fingerprint: readFingerprint(fp, slug ?? ''),
    unlinkedName: name !== undefined ? unescapePart(name) : null,
  };
}

/**
 * The `auto` part of an auto-link to the record's own slug: `*`, then the place's digests (`placeDigest`, fixed
 * lengths, `~` for an unknown value) unless both are unknown (a place known on neither part disagrees with none).
 */
function packAuto(place: LinkPlace | undefined): string {
  const digest = place ? placeDigest(place) : { domain: null, country: null };
  if (digest.domain === null && digest.country === null) return '*';
  return `*${digest.domain ?? '~'.repeat(DOMAIN_DIGEST_LENGTH)}${digest.country ?? '~'.repeat(COUNTRY_DIGEST_LENGTH)}`;
}

/** `*` alone, or `*` and both digests; anything else is not an auto-link to the record's own slug. */
const OWN_AUTO_LINK = new RegExp(
  `^\\*(?:([A-Za-z0-9_-]{${DOMAIN_DIGEST_LENGTH}}|~{${DOMAIN_DIGEST_LENGTH}})([A-Za-z0-9_-]{${COUNTRY_DIGEST_LENGTH}}|~{${COUNTRY_DIGEST_LENGTH}}))?$`,
);

function unknownDigest(part: string): string | null {
  return part.startsWith('~') ? null : part;
}

/**
 * Every record state of one installation, a page of buckets at a time; a record may come twice (a split during
 * the scan, see scanLinearHash). Stops when `visit` returns false.
 */
export async function scanRecordStates(
  redis: RedisClient,
  keys: Keys,
  installationId: string,
  visit: (recordId: string, state: StoredState) => boolean,
): Promise<void> {
  await scanLinearHash(redis, keys.recordStates(installationId), (recordId, value) =>
    visit(recordId, unpackState(value)),
  );
}
