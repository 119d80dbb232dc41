import { z } from 'zod';
import { MATCH_STATUSES, type MatchStatus } from '../fields.js';
import type { RedisClient } from '../redis.js';
import type { Keys } from './keys.js';
import { getLinearHashFields, linearHashSize } from './linear-hash.js';
import { LuaScript } from './lua-script.js';
import { STATUS_CODES } from './record-state.js';

/**
 * An installation's records counted by status, their scores by integer part, its records listed by status a
 * page at a time, and the slugs that list several records: kept by the scripts that change a record's state
 * (lua/lib/status-counts.lua), so the admin page reads them without scanning every state. An installation
 * written before they were kept has none: the first read builds them once (`ensureBuilt`, idempotent and safe
 * beside writes), and `built` in the counts hash marks it done.
 */

const BUILD = LuaScript.load('status-counts-build');
const RANGE = LuaScript.load('lh-range');
const rangeReply = z.tuple([z.number(), z.array(z.string())]);
const buildReply = z.union([z.literal('gone'), z.literal('done'), z.string().regex(/^\d+$/)]);

/** Buckets per build step: about 2,000 records, so a step holds Redis a few milliseconds. */
export const BUILD_BUCKETS = 50;

export interface StatusCountsView {
  counts: Record<MatchStatus, number>;
  /** Records with a status and a score, by the score's integer part. */
  scoreBins: Map<number, number>;
  /** When a record's state last changed (ISO), null when not since the counts were kept. */
  changedAt: string | null;
}

export class StatusCounts {
  private readonly building = new Map<string, Promise<void>>();

  constructor(
    private readonly redis: RedisClient,
    private readonly keys: Keys,
  ) {}

  /** The keys every state-changing script takes after its own (see link-apply.lua). */
  scriptKeys(installationId: string): [string, string] {
    return [this.keys.statusCounts(installationId), this.keys.statusRecordsPrefix(installationId)];
  }

  stem(installationId: string, status: MatchStatus): string {
    return `${this.keys.statusRecordsPrefix(installationId)}:${STATUS_CODES[status]}`;
  }

  async isBuilt(installationId: string): Promise<boolean> {
    return (await this.redis.hget(this.keys.statusCounts(installationId), 'built')) === '1';
  }

  /**
   * Counts the states written before the counts were kept, once. Concurrent callers in one process share a
   * build; two processes building at once are harmless (each step counts only what is not counted).
   */
  async ensureBuilt(installationId: string): Promise<void> {
    if (await this.isBuilt(installationId)) return;
    const running = this.building.get(installationId);
    if (running) return running;
    const build = this.build(installationId).finally(() => this.building.delete(installationId));
    this.building.set(installationId, build);
    return build;
  }

  /**
   * The build's steps, each one script; `afterStep` runs between them (a test interleaves writes and kills
   * there). Stops quietly when the installation is removed meanwhile.
   */
  async build(installationId: string, afterStep?: () => Promise<void>): Promise<void> {
    const k = this.keys;
    const keys = [
      k.installation(installationId),
      k.recordStates(installationId),
      k.statusCounts(installationId),
      k.statusRecordsPrefix(installationId),
      k.slugRecords(installationId),
      k.sharedSlugDigests(installationId),
    ];
    for (const what of ['states', 'slugs'] as const) {
      for (let from = 0; ; from += BUILD_BUCKETS) {
        const reply = await BUILD.run(this.redis, keys, [what, from, BUILD_BUCKETS], buildReply);
        if (reply === 'gone') return;
        await afterStep?.();
        if (from + BUILD_BUCKETS > Number(reply)) break;
      }
    }
    await BUILD.run(this.redis, keys, ['done', 0, 0], buildReply);
  }

  async read(installationId: string): Promise<StatusCountsView> {
    await this.ensureBuilt(installationId);
    const [sizes, bins] = await Promise.all([
      Promise.all(MATCH_STATUSES.map((s) => linearHashSize(this.redis, this.stem(installationId, s)))),
      this.redis.hgetall(this.keys.statusCounts(installationId)),
    ]);
    const counts = Object.fromEntries(MATCH_STATUSES.map((s, i) => [s, sizes[i] ?? 0])) as Record<
      MatchStatus,
      number
    >;
    const scoreBins = new Map<number, number>();
    for (const [field, value] of Object.entries(bins)) {
      if (!field.startsWith('b:')) continue;
      const n = Number(value);
      if (n > 0) scoreBins.set(Number(field.slice(2)), n);
    }
    const changed = Number(bins.changed);
    const changedAt = Number.isFinite(changed) && changed > 0 ? new Date(changed).toISOString() : null;
    return { counts, scoreBins, changedAt };
  }

  /**
   * Records in one status from position `offset` (bucket order: stable between writes), and how many there are.
   * Reads the buckets' sizes before the page, never their records.
   */
  async page(
    installationId: string,
    status: MatchStatus,
    offset: number,
    count: number,
  ): Promise<{ total: number; recordIds: string[] }> {
    await this.ensureBuilt(installationId);
    const { total, entries } = await rangeOf(this.redis, this.stem(installationId, status), offset, count);
    return { total, recordIds: entries.map(([id]) => id) };
  }

  /** Which of these records are in the status (for a search by record id). */
  async inStatus(
    installationId: string,
    status: MatchStatus,
    recordIds: readonly string[],
  ): Promise<boolean[]> {
    await this.ensureBuilt(installationId);
    const stem = this.stem(installationId, status);
    return (await getLinearHashFields(this.redis, stem, recordIds)).map((v) => v !== null);
  }

  /** Slug digests listing two records or more. */
  async sharedDigests(installationId: string): Promise<string[]> {
    await this.ensureBuilt(installationId);
    return this.redis.smembers(this.keys.sharedSlugDigests(installationId));
  }
}

/** Fields and values of one linear-hash map from a position, in bucket order, and its size. */
export async function rangeOf(
  redis: RedisClient,
  stem: string,
  offset: number,
  count: number,
): Promise<{ total: number; entries: [string, string][] }> {
  const [total, flat] = await RANGE.run(redis, [stem], [Math.max(0, offset), Math.max(0, count)], rangeReply);
  const entries: [string, string][] = [];
  for (let i = 0; i + 1 < flat.length; i += 2) entries.push([flat[i]!, flat[i + 1]!]);
  return { total, entries };
}
