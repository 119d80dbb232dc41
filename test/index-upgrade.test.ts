import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { upgradeLinkIndex } from '../src/migrations/003-link-index-bucketed.js';
import { deleteByPattern } from '../src/redis.js';
import { scanLinearHash } from '../src/storage/linear-hash.js';
import { suiteSystem } from './support/local-system.js';
import { keysWithPrefix, runEnded } from './support/system-state.js';

/**
 * A deployment upgraded from the link index's old storage (a hash per field, a set per slug) has only old keys,
 * which nothing reads: until a full sync writes the new index, a score change finds no record. Start-up finds
 * such installations, queues their full sync once and deletes the old keys.
 */

const system = suiteSystem({ companies: 30, logLevel: 'silent' }, { firstRunEnded: true });

/**
 * The index as an older version left it: its keys only, the bucketed ones absent (the fan-out's installation
 * numbers are kept: this process remembers its number, as one that never had them would make it anew).
 */
async function leaveOnlyTheOldIndex(slug: string, recordId: string): Promise<void> {
  const { redis, config } = system.ctx;
  const id = system.installationId;
  const inst = `${config.redisPrefix}:inst:{${id}}`;
  for (const pattern of [
    `${inst}:rec*`,
    `${inst}:slug-recs*`,
    `${inst}:place*`,
    `${config.redisPrefix}:{slug-fan-*`,
  ])
    await deleteByPattern(redis, pattern);
  await redis.hset(`${inst}:record-slug`, recordId, slug);
  await redis.hset(`${inst}:seen`, recordId, JSON.stringify(['name', 'example.com', slug]));
  await redis.sadd(`${inst}:slug:${slug}`, recordId);
  await redis.sadd(`${config.redisPrefix}:slug-installations:${slug}`, id);
}

describe('start-up upgrade of the link index', () => {
  it('queues one full sync for an installation with the old keys, deletes them, and fan-out finds it again', async () => {
    const linked = system.recordIds
      .map((id) => ({ id, p: system.hubspot.getCompany(id)?.properties ?? {} }))
      .find(({ p }) => p.report_match_status === 'matched' && p.report_slug);
    if (!linked) throw new Error('no record was linked by the first sync');
    const slug = linked.p.report_slug!;
    await leaveOnlyTheOldIndex(slug, linked.id);
    expect(await system.ctx.index.slugs.installationsForSlug(slug)).toEqual([]);

    const upgraded = await upgradeLinkIndex(system.ctx);
    expect(upgraded).toHaveLength(1);
    expect(upgraded[0]).toMatchObject({
      installationId: system.installationId,
      skipped: null,
      slugIndexRebuilt: null,
    });
    // Another process starting at the same time, or a later start: nothing more to do.
    expect(await upgradeLinkIndex(system.ctx)).toEqual([]);

    const run = await runEnded(system, upgraded[0]!.runId!);
    expect(run.state).toBe('done');
    expect(await system.ctx.index.slugs.installationsForSlug(slug)).toEqual([system.installationId]);
    expect(await system.ctx.index.slugs.recordsForSlug(system.installationId, slug)).toContain(linked.id);

    const prefix = system.ctx.config.redisPrefix;
    const left = (await keysWithPrefix(system.ctx.redis, prefix)).filter(
      (k) =>
        k.startsWith(`${prefix}:slug-installations:`) ||
        /:inst:\{[^}]+\}:(slug:|record-slug$|seen$|record-status$|written-seq$)/.test(k),
    );
    expect(left).toEqual([]);
  }, 120_000);

  it("treats the bucketed index's place map as old: one full sync gives the records their place digests", async () => {
    const { redis, config } = system.ctx;
    const id = system.installationId;
    const inst = `${config.redisPrefix}:inst:{${id}}`;
    const auto = await system.ctx.index.autoLinksOf(id, system.recordIds);
    const autoLinked = system.recordIds.find((_, i) => auto[i] !== null);
    if (!autoLinked) throw new Error('no record was auto-linked by the first sync');
    const stateOf = async (): Promise<string | undefined> => {
      let found: string | undefined;
      await scanLinearHash(redis, system.ctx.keys.recordStates(id), (recordId, value) => {
        if (recordId === autoLinked) found = value;
        return found === undefined;
      });
      return found;
    };
    const slug = auto[system.recordIds.indexOf(autoLinked)]!;
    // Marking an auto-link again keeps the digests its state has.
    const before = await stateOf();
    expect(before).toMatch(/\|\*[A-Za-z0-9_~-]{5}(\||$)/);
    await system.ctx.index.markAutoLink(id, autoLinked, slug);
    expect(await stateOf()).toBe(before);
    // The previous format's state: `*` alone for the auto-link.
    await system.ctx.index.dropAutoLink(id, autoLinked);
    await system.ctx.index.markAutoLink(id, autoLinked, slug);
    expect(await stateOf()).toMatch(/\|\*(\||$)/);
    // The previous format: a place map of its own, and an auto-link without digests in the record's state.
    await redis.hset(`${inst}:place`, 'k', '0', 'p', '0', 'n', '1');
    await redis.hset(`${inst}:place:0`, autoLinked, 'example.com|DE');
    await redis.del(system.ctx.keys.indexUpgradeLock(id)); // a start after the first upgrade's lock expired

    const upgraded = await upgradeLinkIndex(system.ctx);
    expect(upgraded).toHaveLength(1);
    expect(upgraded[0]).toMatchObject({ installationId: id, skipped: null });
    expect(await upgradeLinkIndex(system.ctx)).toEqual([]);
    const run = await runEnded(system, upgraded[0]!.runId!);
    expect(run.state).toBe('done');
    expect(await redis.keys(`${inst}:place*`)).toEqual([]);
    // The record's state carries the digests of its domain and country now (`*` then 5 characters).
    expect(await stateOf()).toMatch(/^[^|]*\|[^|]*\|[^|]*\|[^|]*\|\*[A-Za-z0-9_~-]{5}(\||$)/);
  }, 120_000);

  it('treats review items that name their candidates by slug as old: a full sync writes them anew', async () => {
    const { redis, config, index } = system.ctx;
    const id = system.installationId;
    const inst = `${config.redisPrefix}:inst:{${id}}`;
    const waiting = await index.reviews.items(id);
    // The format before: the candidates by slug, their details under the slug.
    await deleteByPattern(redis, `${system.ctx.keys.review(id)}*`);
    await redis.del(system.ctx.keys.reviewCandidates(id));
    await redis.hset(`${inst}:review-items`, '1', 'Old|~|~|mwx1ogzd|old-slug,30.2,same name');
    await redis.hset(`${inst}:review-cand`, 'old-slug', '["Old",false,false,false]', '#old-slug', '1');
    await redis.del(system.ctx.keys.indexUpgradeLock(id));

    const upgraded = await upgradeLinkIndex(system.ctx);
    expect(upgraded).toHaveLength(1);
    expect(upgraded[0]).toMatchObject({ installationId: id, skipped: null, slugIndexRebuilt: null });
    const run = await runEnded(system, upgraded[0]!.runId!);
    expect(run.state).toBe('done');
    expect(await redis.exists(`${inst}:review-items`, `${inst}:review-cand`)).toBe(0);
    expect(await index.reviews.items(id)).toEqual(
      waiting.map((item) => ({ ...item, at: expect.any(String) })),
    );
  }, 120_000);

  it('writes the slug index and the fan-out anew from the records when their digests were hex, without a sync', async () => {
    const { redis, config, index } = system.ctx;
    const id = system.installationId;
    const keys = system.ctx.keys;
    const slugs = await index.slugsOf(id, system.recordIds);
    const linked = system.recordIds.flatMap((recordId, i) =>
      slugs[i] ? [{ recordId, slug: slugs[i]! }] : [],
    );
    expect(linked.length).toBeGreaterThan(1);
    // The previous format: 8 hex digits of the slug's SHA-1 as the field, in the map and in a fan-out shard.
    const hex = (slug: string) => createHash('sha1').update(slug).digest('hex').slice(0, 8);
    await deleteByPattern(redis, `${keys.slugRecords(id)}*`);
    await deleteByPattern(redis, `${config.redisPrefix}:{slug-fan-*`);
    const old = keys.legacySlugRecords(id);
    await redis.hset(old, 'k', '0', 'p', '0', 'n', String(linked.length));
    for (const { recordId, slug } of linked) await redis.hset(`${old}:0`, hex(slug), recordId);
    const oldShard = keys.legacySlugInstallationsShard(3);
    await redis.hset(oldShard, 'k', '0', 'p', '0', 'n', '1');
    await redis.hset(`${oldShard}:0`, hex(linked[0]!.slug), '1');
    for (const { slug } of linked) expect(await index.slugs.installationsForSlug(slug)).toEqual([]);
    await redis.del(keys.indexUpgradeLock(id));

    const upgraded = await upgradeLinkIndex(system.ctx);
    expect(upgraded).toEqual([
      { installationId: id, runId: null, skipped: null, slugIndexRebuilt: linked.length },
    ]);
    for (const { recordId, slug } of linked) {
      expect(await index.slugs.installationsForSlug(slug)).toEqual([id]);
      expect(await index.slugs.recordsForSlug(id, slug)).toContain(recordId);
    }
    expect(await redis.keys(`${old}*`)).toEqual([]);
    expect(await redis.keys(`${oldShard}*`)).toEqual([]);
    expect(await upgradeLinkIndex(system.ctx)).toEqual([]);
  });

  it('does nothing on a deployment that never had the old index', async () => {
    expect(await upgradeLinkIndex(system.ctx)).toEqual([]);
  });
});
