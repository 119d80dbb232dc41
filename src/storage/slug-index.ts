import { z } from 'zod';
import type { RedisClient } from '../redis.js';
import type { Keys } from './keys.js';
import { FIELDS_PER_CALL, scanLinearHash } from './linear-hash.js';
import { LuaScript } from './lua-script.js';
import { escapePart } from './part-escape.js';
import { scanRecordStates } from './record-state.js';
import { slugDigest } from './slug-digest.js';
import type { SlugFanout } from './slug-fanout.js';

/**
 * Which records are linked to a slug: per installation, a linear-hash map slug digest -> space-joined record
 * ids (written with the records' states by link-apply.lua), and for the deployment, which installations have a
 * record on it (slug-fanout.ts). Two slugs may share a digest; the records' own states tell them apart.
 */

const RECORDS_FOR_SLUG = LuaScript.load('link-records-for-slug');
const recordsForSlugReply = z.array(z.string());
const REINDEX = LuaScript.load('link-reindex');
const UNINDEX = LuaScript.load('link-unindex');
const LISTED_ADD = LuaScript.load('listed-links-add');
const listedAddReply = z.enum(['added', 'gone']);

/**
 * How long records a run listed stay findable by the slug the CRM holds for them, after the run's last page: the
 * run's batches index them long before (a first sync of a large portal lists a page every few seconds).
 */
export const LISTED_LINK_TTL_MS = 6 * 3_600_000;

/** A record as a run listed it: the slug the CRM holds for it. */
export interface ListedLink {
  recordId: string;
  slug: string;
}

/** A reply naming records and slugs: its code, then record id / stored slug pairs. */
export function recordSlugsReply<const C extends readonly [string, ...string[]]>(codes: C) {
  return z.tuple([z.enum(codes)], z.string());
}
const unindexReply = recordSlugsReply(['unindexed']);
const reindexReply = z.enum(['indexed', 'gone']);

/** Record id / stored slug pairs from a flat list. */
function pairs(flat: readonly string[]): [string, string][] {
  const out: [string, string][] = [];
  for (let i = 0; i + 1 < flat.length; i += 2) out.push([flat[i]!, flat[i + 1]!]);
  return out;
}

export class SlugIndex {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: Keys,
    private readonly fanout: SlugFanout,
  ) {}

  async recordsForSlug(installationId: string, slug: string): Promise<string[]> {
    const stored = escapePart(slug);
    const ids = await RECORDS_FOR_SLUG.run(
      this.redis,
      [this.keys.slugRecords(installationId), this.keys.recordStates(installationId)],
      [stored, slugDigest(stored)],
      recordsForSlugReply,
    );
    return ids.sort();
  }

  /**
   * Records a run listed holding `slug` in the CRM before its batch indexed them (`addListed`), besides those
   * `recordsForSlug` finds; a record the index has since filed elsewhere may be among them (its update then
   * writes what its own slug says, or nothing).
   */
  async listedForSlug(installationId: string, slug: string): Promise<string[]> {
    const raw = await this.redis.hget(this.keys.listedLinks(installationId), escapePart(slug));
    return raw ? raw.split(' ').filter((id) => id !== '') : [];
  }

  /**
   * Records a run just listed holding a slug in the CRM that the index does not file them under (a slug a person
   * set, seen before its batch wrote the record): an event for the slug reaches them now, not when the backfill
   * does. The fan-out is written first, as in `LinkIndex.apply`.
   */
  async addListed(installationId: string, links: readonly ListedLink[]): Promise<void> {
    // A space separates ids in the stored value; no CRM's record id has one.
    const kept = links.filter((l) => !/\s/.test(l.recordId) && l.recordId !== '');
    if (kept.length === 0) return;
    const stored = kept.map((l) => ({ recordId: l.recordId, slug: escapePart(l.slug) }));
    const digests = [...new Set(stored.map((l) => slugDigest(l.slug)))];
    await this.fanout.add(installationId, digests);
    for (let i = 0; i < stored.length; i += FIELDS_PER_CALL) {
      const args = stored.slice(i, i + FIELDS_PER_CALL).flatMap((l) => [l.slug, l.recordId]);
      const added = await LISTED_ADD.run(
        this.redis,
        [this.keys.installation(installationId), this.keys.listedLinks(installationId)],
        [LISTED_LINK_TTL_MS, ...args],
        listedAddReply,
      );
      if (added === 'gone') {
        // Removed meanwhile: as in `LinkIndex.apply`, take back what was just added to the fan-out.
        await this.fanout.remove(installationId, digests);
        await this.fanout.forgetInstallation(installationId);
        return;
      }
    }
  }

  /**
   * Installations with a record on the slug, or that had one: an installation is not taken out when its last
   * record leaves a slug, and two slugs may share a digest (slug-fanout.ts). The fan-out finds no record there.
   */
  async installationsForSlug(slug: string): Promise<string[]> {
    return (await this.fanout.installations(slugDigest(escapePart(slug)))).sort();
  }

  /**
   * Writes the slug -> records map and this installation's part of the fan-out again from the records' states:
   * the start-up upgrade when their digests changed form. Adding is idempotent, and the fan-out is written
   * first as in `LinkIndex.apply`. Returns how many linked records it found.
   */
  async rebuild(installationId: string): Promise<number> {
    const linked = new Map<string, string>();
    await scanRecordStates(this.redis, this.keys, installationId, (recordId, state) => {
      if (state.slug) linked.set(recordId, escapePart(state.slug));
      else linked.delete(recordId);
      return true;
    });
    await this.fanout.add(installationId, [...new Set([...linked.values()].map(slugDigest))]);
    const entries = [...linked];
    const k = this.keys;
    const keys = [
      k.installation(installationId),
      k.recordStates(installationId),
      k.slugRecords(installationId),
      k.sharedSlugDigests(installationId),
    ];
    for (let i = 0; i < entries.length; i += FIELDS_PER_CALL) {
      const args = entries
        .slice(i, i + FIELDS_PER_CALL)
        .flatMap(([recordId, slug]) => [recordId, slug, slugDigest(slug)]);
      if ((await REINDEX.run(this.redis, keys, args, reindexReply)) === 'gone') break;
    }
    return linked.size;
  }

  /**
   * Takes records out of the slugs they left (`left`: record id / stored slug pairs, as link-apply.lua and
   * link-forget.lua name them). One taken out while on another slug with the same digest is filed again.
   */
  async unindex(installationId: string, left: readonly string[]): Promise<void> {
    const k = this.keys;
    const all = pairs(left);
    for (let i = 0; i < all.length; i += FIELDS_PER_CALL) {
      const some = all.slice(i, i + FIELDS_PER_CALL).map(([recordId, slug]) => ({
        recordId,
        slug,
        digest: slugDigest(slug),
      }));
      const [, ...moved] = await UNINDEX.run(
        this.redis,
        [k.recordStates(installationId), k.slugRecords(installationId), k.sharedSlugDigests(installationId)],
        some.flatMap((e) => [e.recordId, e.slug, e.digest]),
        unindexReply,
      );
      const removedFrom = new Map(some.map((e) => [e.recordId, e.digest]));
      const again = pairs(moved).flatMap(([recordId, slug]) => {
        const digest = slugDigest(slug);
        return digest === removedFrom.get(recordId) ? [recordId, slug, digest] : [];
      });
      if (again.length === 0) continue;
      await REINDEX.run(
        this.redis,
        [
          k.installation(installationId),
          k.recordStates(installationId),
          k.slugRecords(installationId),
          k.sharedSlugDigests(installationId),
        ],
        again,
        reindexReply,
      );
    }
  }

  /**
   * Before an installation is removed (and after its hash is deleted, so that no batch adds to the index any
   * more): it takes part in no slug's fan-out.
   */
  async forgetInstallation(installationId: string): Promise<void> {
    const digests = new Set<string>();
    await scanLinearHash(this.redis, this.keys.slugRecords(installationId), (digest) => {
      digests.add(digest);
      return true;
    });
    for (const slug of await this.redis.hkeys(this.keys.listedLinks(installationId)))
      digests.add(slugDigest(slug));
    await this.fanout.remove(installationId, [...digests]);
    await this.fanout.forgetInstallation(installationId);
  }
}
