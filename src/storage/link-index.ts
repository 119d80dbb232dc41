import { z } from 'zod';
import { MATCH_STATUSES, type MatchStatus } from '../fields.js';
import type { PlaceDigest } from '../matching/shared-links.js';
import type { RedisClient } from '../redis.js';
import type { Keys } from './keys.js';
import { FIELDS_PER_CALL, getLinearHashFields } from './linear-hash.js';
import { LuaScript } from './lua-script.js';
import { escapePart } from './part-escape.js';
import type { PollCursors } from './poll-cursor.js';
import {
  type FingerprintDigest,
  packState,
  type RecordState,
  type StoredState,
  scanRecordStates,
  unpackState,
} from './record-state.js';
import { storeReview } from './review-codec.js';
import type { ReviewQueue } from './review-queue.js';
import { slugDigest } from './slug-digest.js';
import type { SlugFanout } from './slug-fanout.js';
import { recordSlugsReply, type SlugIndex } from './slug-index.js';
import { rangeOf, type StatusCounts } from './status-counts.js';

const SEARCH_CHUNK = 1_000;

/**
 * What the connector remembers about each record besides the CRM itself: which slug it is linked to (and the
 * reverse, for fan-out: `slugs`), its match status and score (for the admin page without CRM calls), whether
 * the connector made the link itself, its review item and the slugs a person rejected (`reviews`), the
 * fingerprint the change poll compares (and where that poll stopped: `pollCursors`), and the report sequence
 * last written. This module and the three it holds are the only ones that read or write those keys.
 * Everything here but the rejections can be rebuilt from the CRM by a full sync: the record's `report_slug` is
 * the source of truth.
 *
 * Storage (at most 150 bytes of Redis per linked record): a record's state is one short string
 * (record-state.ts) in a linear-hash map of compact buckets (linear-hash.ts); the reverse index slug digest ->
 * record ids in a second map; review items in a third (review-codec.ts). Every write is a Lua script that first
 * checks the installation's hash still exists (same hash tag): a batch still running when its installation is
 * removed writes nothing after the removal deleted the hash.
 */

/**
 * The records the connector itself linked to one report, with the digests of their places as they were when
 * linked (null: not known, as for a state written without place digests or a link inherited in a merge).
 */
export interface AutoLinkGroup {
  slug: string;
  records: Array<{ recordId: string; place: PlaceDigest | null }>;
}

const APPLY = LuaScript.load('link-apply');
const FORGET = LuaScript.load('link-forget');
const SET_SEQS = LuaScript.load('link-set-seqs');
const SET_AUTO = LuaScript.load('link-set-auto');

const applyReply = recordSlugsReply(['applied', 'gone']);
const forgetReply = recordSlugsReply(['forgotten']);
const setReply = z.enum(['set', 'gone']);

/** The stores the index is made of, built with it in the composition root (app/stores.ts). */
export interface LinkIndexParts {
  fanout: SlugFanout;
  reviews: ReviewQueue;
  slugs: SlugIndex;
  pollCursors: PollCursors;
  statuses: StatusCounts;
}

export class LinkIndex {
  readonly reviews: ReviewQueue;
  readonly slugs: SlugIndex;
  readonly pollCursors: PollCursors;
  /** Counts and pages of records by status, kept by the scripts here (status-counts.ts). */
  readonly statuses: StatusCounts;
  private readonly fanout: SlugFanout;

  constructor(
    private readonly redis: RedisClient,
    private readonly keys: Keys,
    parts: LinkIndexParts,
  ) {
    this.fanout = parts.fanout;
    this.reviews = parts.reviews;
    this.slugs = parts.slugs;
    this.pollCursors = parts.pollCursors;
    this.statuses = parts.statuses;
  }

  /**
   * Applies the state of many records. A record moving between slugs is filed under its new slug with its state,
   * atomically, and taken out of the one it left right after (`SlugIndex.unindex`): in between it is listed
   * under both, and `SlugIndex.recordsForSlug` tells them apart by its state. Writes nothing once the
   * installation is removed.
   */
  async apply(installationId: string, states: RecordState[]): Promise<void> {
    if (states.length === 0) return;
    // The slug -> installations fan-out is global (its own slots), so it is written before the installation's
    // own script rather than in it: a fan-out between the two finds this installation with no record on the
    // slug yet, never a linked record missing from the fan-out.
    const digests = [...new Set(states.flatMap((s) => (s.slug ? [slugDigest(escapePart(s.slug))] : [])))];
    await this.fanout.add(installationId, digests);
    const k = this.keys;
    const keys = [
      k.installation(installationId),
      k.recordStates(installationId),
      k.slugRecords(installationId),
      k.review(installationId),
      k.reviewCandidates(installationId),
      ...this.statuses.scriptKeys(installationId),
      k.sharedSlugDigests(installationId),
    ];
    for (let i = 0; i < states.length; i += FIELDS_PER_CALL) {
      const args = states.slice(i, i + FIELDS_PER_CALL).flatMap((s) => {
        const review = s.review ? storeReview(s.review) : null;
        const slug = s.slug ? escapePart(s.slug) : '';
        return [
          s.recordId,
          packState(s),
          slug,
          slug ? slugDigest(slug) : '',
          review?.item ?? '',
          review?.candidates ?? '',
        ];
      });
      const [code, ...left] = await APPLY.run(this.redis, keys, args, applyReply);
      if (code === 'gone') {
        // Removed meanwhile: take back what was just added to the fan-out (the removal may have read the
        // installation's slugs before it).
        await this.fanout.remove(installationId, digests);
        await this.fanout.forgetInstallation(installationId);
        return;
      }
      await this.slugs.unindex(installationId, left);
    }
  }

  /** Forgets records that were deleted or merged away. */
  async forget(installationId: string, recordIds: string[]): Promise<void> {
    const k = this.keys;
    const keys = [
      k.recordStates(installationId),
      k.review(installationId),
      k.reviewCandidates(installationId),
      ...this.statuses.scriptKeys(installationId),
    ];
    for (let i = 0; i < recordIds.length; i += FIELDS_PER_CALL) {
      const [, ...left] = await FORGET.run(
        this.redis,
        keys,
        recordIds.slice(i, i + FIELDS_PER_CALL),
        forgetReply,
      );
      await this.slugs.unindex(installationId, left);
    }
  }

  /** The slug each record is linked to, as last written; null where none. */
  async slugsOf(installationId: string, recordIds: string[]): Promise<(string | null)[]> {
    return (await this.states(installationId, recordIds)).map((s) => s?.slug ?? null);
  }

  /** Records that the connector made this link itself (a merge survivor inheriting an auto-link). */
  async markAutoLink(installationId: string, recordId: string, slug: string): Promise<void> {
    await this.setAuto(installationId, recordId, escapePart(slug));
  }

  async autoLinkOf(installationId: string, recordId: string): Promise<string | null> {
    const [slug = null] = await this.autoLinksOf(installationId, [recordId]);
    return slug;
  }

  /** The link is not the connector's own any more (a person set or confirmed it). */
  async dropAutoLink(installationId: string, recordId: string): Promise<void> {
    await this.setAuto(installationId, recordId, '');
  }

  /**
   * Reports the connector linked to more than one record by itself, with the digests of those records' places.
   * Reads only the slugs that list several records (kept by the scripts: status-counts.ts), never every state.
   * A record whose auto-link names another slug than its own (a merge survivor before its state is written
   * again) is not seen here until it is.
   */
  async sharedAutoLinks(installationId: string): Promise<AutoLinkGroup[]> {
    const digests = await this.statuses.sharedDigests(installationId);
    const lists = await getLinearHashFields(this.redis, this.keys.slugRecords(installationId), digests);
    const recordIds = [...new Set(lists.flatMap((l) => (l ? l.split(' ') : [])))];
    const states = await this.states(installationId, recordIds);
    const bySlug = new Map<string, Map<string, PlaceDigest | null>>();
    recordIds.forEach((recordId, i) => {
      const state = states[i];
      if (!state?.autoSlug || state.autoSlug !== state.slug) return;
      const records = bySlug.get(state.autoSlug) ?? new Map<string, PlaceDigest | null>();
      records.set(recordId, state.place);
      bySlug.set(state.autoSlug, records);
    });
    return groupsOf(bySlug);
  }

  /** The same by a scan of every state (what the kept sets must agree with; tests and the bench compare). */
  async sharedAutoLinksByScan(installationId: string): Promise<AutoLinkGroup[]> {
    const bySlug = new Map<string, Map<string, PlaceDigest | null>>();
    await scanRecordStates(this.redis, this.keys, installationId, (recordId, state) => {
      if (!state.autoSlug) return true;
      const records = bySlug.get(state.autoSlug) ?? new Map<string, PlaceDigest | null>();
      records.set(recordId, state.place);
      bySlug.set(state.autoSlug, records);
      return true;
    });
    return groupsOf(bySlug);
  }

  async autoLinksOf(installationId: string, recordIds: string[]): Promise<(string | null)[]> {
    return (await this.states(installationId, recordIds)).map((s) => s?.autoSlug ?? null);
  }

  /** The fingerprint last seen per record, as digests (compare with `digestFingerprint`); null when never seen. */
  async fingerprints(installationId: string, recordIds: string[]): Promise<(FingerprintDigest | null)[]> {
    return (await this.states(installationId, recordIds)).map((s) => s?.fingerprint ?? null);
  }

  async unlinkedNames(installationId: string): Promise<Map<string, string>> {
    const names = new Map<string, string>();
    await scanRecordStates(this.redis, this.keys, installationId, (recordId, state) => {
      if (state.unlinkedName !== null) names.set(recordId, state.unlinkedName);
      else names.delete(recordId);
      return true;
    });
    return names;
  }

  /** The match status of each record as last written, in their order (null: not processed). */
  async statusesOf(installationId: string, recordIds: readonly string[]): Promise<(MatchStatus | null)[]> {
    return (await this.states(installationId, recordIds)).map((s) => s?.status ?? null);
  }

  async statusOf(installationId: string, recordId: string): Promise<MatchStatus | null> {
    const [status = null] = await this.statusesOf(installationId, [recordId]);
    return status;
  }

  /** Up to `limit` records in one status with their normalised names (the first page of `statusPage`). */
  async recordsWithStatus(
    installationId: string,
    status: MatchStatus,
    limit: number,
  ): Promise<{ recordId: string; normalizedName: string | null }[]> {
    return (await this.statusPage(installationId, status, 0, limit)).records;
  }

  /**
   * Records in one status from position `offset` (an indexed range of the status's own map, never a scan of
   * every state), with their normalised names where the connector keeps one (unlinked records), and how many
   * records are in that status.
   */
  async statusPage(
    installationId: string,
    status: MatchStatus,
    offset: number,
    limit: number,
  ): Promise<{ total: number; records: { recordId: string; normalizedName: string | null }[] }> {
    const { total, recordIds } = await this.statuses.page(installationId, status, offset, Math.max(0, limit));
    const states = await this.states(installationId, recordIds);
    return {
      total,
      records: recordIds.map((recordId, i) => ({
        recordId,
        normalizedName: states[i]?.unlinkedName ?? null,
      })),
    };
  }

  /**
   * Records in one status whose id is `query`, or whose kept name (unlinked records only) holds it, or (linked
   * records) whose slug is it: up to `limit` and how many match. Reads that status's records only, 1,000 at a
   * time.
   */
  async searchStatus(
    installationId: string,
    status: MatchStatus,
    query: string,
    limit: number,
  ): Promise<{ total: number; records: { recordId: string; normalizedName: string | null }[] }> {
    const needle = query.trim().toLowerCase();
    const found = new Map<string, string | null>();
    let total = 0;
    const take = (recordId: string, name: string | null) => {
      if (found.has(recordId)) return;
      total += 1;
      if (found.size < limit) found.set(recordId, name);
    };
    const [exact] = await this.statuses.inStatus(installationId, status, [query.trim()]);
    if (exact)
      take(query.trim(), (await this.states(installationId, [query.trim()]))[0]?.unlinkedName ?? null);
    const onSlug = await this.slugs.recordsForSlug(installationId, query.trim());
    const onSlugStatus = await this.statuses.inStatus(installationId, status, onSlug);
    onSlug.forEach((recordId, i) => {
      if (onSlugStatus[i]) take(recordId, null);
    });
    if (needle === '')
      return {
        total,
        records: [...found].map(([recordId, normalizedName]) => ({ recordId, normalizedName })),
      };
    const stem = this.statuses.stem(installationId, status);
    for (let offset = 0; ; offset += SEARCH_CHUNK) {
      const { total: size, entries } = await rangeOf(this.redis, stem, offset, SEARCH_CHUNK);
      const ids = entries.map(([id]) => id);
      const states = await this.states(installationId, ids);
      ids.forEach((recordId, i) => {
        const name = states[i]?.unlinkedName ?? null;
        if (name?.toLowerCase().includes(needle)) take(recordId, name);
      });
      if (offset + SEARCH_CHUNK >= size) break;
    }
    return { total, records: [...found].map(([recordId, normalizedName]) => ({ recordId, normalizedName })) };
  }

  /** Records per status, from the kept counts. */
  async coverage(installationId: string): Promise<Record<MatchStatus, number>> {
    return (await this.statuses.read(installationId)).counts;
  }

  /** The same by a scan of every state (what the kept counts must agree with). */
  async coverageByScan(installationId: string): Promise<Record<MatchStatus, number>> {
    const counts = Object.fromEntries(MATCH_STATUSES.map((s) => [s, 0])) as Record<MatchStatus, number>;
    for (const state of (await this.allStates(installationId)).values()) {
      if (state.status) counts[state.status] += 1;
    }
    return counts;
  }

  /** Every record and its status, by a scan of every state. */
  async recordIdsByScan(installationId: string): Promise<[string, MatchStatus | null][]> {
    return [...(await this.allStates(installationId))].map(([recordId, s]) => [recordId, s.status]);
  }

  /** Every score kept, by a scan of every state. */
  async scores(installationId: string): Promise<number[]> {
    return [...(await this.allStates(installationId)).values()].flatMap((s) =>
      s.score !== null ? [s.score] : [],
    );
  }

  /** Scores of records with a status (what the kept score counts hold), by a scan of every state. */
  async scoresByScan(installationId: string): Promise<number[]> {
    return [...(await this.allStates(installationId)).values()].flatMap((s) =>
      s.score !== null && s.status !== null ? [s.score] : [],
    );
  }

  /**
   * Each record's state exactly as stored (null where none). Every write to a record's state (a batch's write, a
   * decision, a forget, a sequence) changes it: a batch compares it before its unlocked planning and under its
   * record locks to find the records someone else wrote meanwhile (enrich-batch.ts).
   */
  async stateMarks(installationId: string, recordIds: readonly string[]): Promise<(string | null)[]> {
    if (recordIds.length === 0) return [];
    return getLinearHashFields(this.redis, this.keys.recordStates(installationId), recordIds);
  }

  /** Highest report sequence already written per record (0 when none). */
  async writtenSeqs(installationId: string, recordIds: string[]): Promise<number[]> {
    return (await this.states(installationId, recordIds)).map((s) => s?.seq ?? 0);
  }

  async setWrittenSeqs(installationId: string, seqs: Map<string, number>): Promise<void> {
    const entries = [...seqs];
    for (let i = 0; i < entries.length; i += FIELDS_PER_CALL) {
      await SET_SEQS.run(
        this.redis,
        [this.keys.installation(installationId), this.keys.recordStates(installationId)],
        entries.slice(i, i + FIELDS_PER_CALL).flatMap(([id, seq]) => [id, seq > 0 ? seq.toString(36) : '']),
        setReply,
      );
    }
  }

  private async setAuto(installationId: string, recordId: string, storedSlug: string): Promise<void> {
    const k = this.keys;
    await SET_AUTO.run(
      this.redis,
      [k.installation(installationId), k.recordStates(installationId)],
      [recordId, storedSlug],
      setReply,
    );
  }

  private async states(
    installationId: string,
    recordIds: readonly string[],
  ): Promise<(StoredState | null)[]> {
    if (recordIds.length === 0) return [];
    const raw = await getLinearHashFields(this.redis, this.keys.recordStates(installationId), recordIds);
    return raw.map((v) => (v === null ? null : unpackState(v)));
  }

  /** Every record's state, each once (a split during the scan may show a record twice). */
  private async allStates(installationId: string): Promise<Map<string, StoredState>> {
    const all = new Map<string, StoredState>();
    await scanRecordStates(this.redis, this.keys, installationId, (recordId, state) => {
      all.set(recordId, state);
      return true;
    });
    return all;
  }
}

function groupsOf(bySlug: Map<string, Map<string, PlaceDigest | null>>): AutoLinkGroup[] {
  return [...bySlug]
    .filter(([, records]) => records.size > 1)
    .map(([slug, records]) => ({
      slug,
      records: [...records]
        .map(([recordId, place]) => ({ recordId, place }))
        .sort((a, b) => a.recordId.localeCompare(b.recordId)),
    }))
    .sort((a, b) => a.slug.localeCompare(b.slug));
}
