import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { scoreBuckets } from '../src/admin/overview.js';
import { linkIndexOf } from '../src/app/stores.js';
import { MATCH_STATUSES, type MatchStatus } from '../src/fields.js';
import { buildStatusCounts } from '../src/migrations/004-status-counts-built.js';
import { closeRedis, createRedis } from '../src/redis.js';
import { Keys } from '../src/storage/keys.js';
import type { LinkIndex } from '../src/storage/link-index.js';
import { fingerprintOf, type RecordState } from '../src/storage/record-state.js';
import { REDIS_URL } from './support/redis-url.js';
import { reliabilitySeed, seededRandom } from './support/seeded-random.js';

/**
 * The per-status counts, score counts, status lists and shared-slug set are kept by the scripts that change a
 * record's state; after any sequence of writes, forgets, seq and auto-link changes, with multi-step operations
 * cut short between their scripts (a killed process), they must say what a scan of every state says. An
 * installation written before they were kept gets them built once, beside writes, and the build may be cut
 * short too.
 */

const prefix = `rc-test-counts-${randomUUID().slice(0, 8)}`;
const redis = createRedis(REDIS_URL, 'worker');
const keys = new Keys(prefix);

afterAll(async () => {
  const left = await redis.keys(`${prefix}:*`);
  if (left.length) await redis.unlink(...left);
  await closeRedis(redis);
});

class Killed extends Error {}

type Random = () => number;

function pick<T>(random: Random, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)]!;
}

function randomState(random: Random, recordId: string): RecordState {
  const status = random() < 0.1 ? null : pick(random, MATCH_STATUSES);
  const slug = status === 'matched' || random() < 0.2 ? pick(random, ['s1', 's2', 's3', 's4', 's5']) : null;
  const score = random() < 0.6 ? Math.round(random() * 1000) / 10 : null;
  return {
    recordId,
    slug,
    status,
    score,
    autoLinked: slug !== null && random() < 0.7,
    unlinkedName: slug === null && random() < 0.5 ? `name ${recordId}` : null,
    review: status === 'needs_review' && random() < 0.5 ? null : null,
    fingerprint: fingerprintOf({ name: recordId, domain: null, fields: { slug } }),
    place: { domain: pick(random, ['a.com', 'b.com', null]), country: pick(random, ['DE', 'FR', null]) },
  };
}

/** One random change; with probability `killRate` the operation is cut short after its first script. */
async function randomChange(index: LinkIndex, id: string, random: Random, killRate: number): Promise<void> {
  const ids = Array.from({ length: 1 + Math.floor(random() * 6) }, () => `r${Math.floor(random() * 80)}`);
  const kill = random() < killRate;
  const original = index.slugs.unindex.bind(index.slugs);
  if (kill) {
    index.slugs.unindex = async () => {
      throw new Killed();
    };
  }
  try {
    const op = random();
    if (op < 0.6)
      await index.apply(
        id,
        ids.map((r) => randomState(random, r)),
      );
    else if (op < 0.75) await index.forget(id, ids);
    else if (op < 0.85)
      await index.setWrittenSeqs(id, new Map(ids.map((r) => [r, Math.floor(random() * 40)])));
    else if (op < 0.93) await index.markAutoLink(id, ids[0]!, pick(random, ['s1', 's2', 's9']));
    else await index.dropAutoLink(id, ids[0]!);
  } catch (err) {
    if (!(err instanceof Killed)) throw err;
  } finally {
    index.slugs.unindex = original;
  }
}

/** What a scan of every state says, in the kept form. */
async function expectAgreement(index: LinkIndex, id: string): Promise<void> {
  const counts = await index.statuses.read(id);
  expect(counts.counts).toEqual(await index.coverageByScan(id));
  const scores = await index.scoresByScan(id);
  const bins = new Map<number, number>();
  for (const s of scores) bins.set(Math.floor(s), (bins.get(Math.floor(s)) ?? 0) + 1);
  expect(new Map([...counts.scoreBins].sort((a, b) => a[0] - b[0]))).toEqual(
    new Map([...bins].sort((a, b) => a[0] - b[0])),
  );
  // The kept set sees a record's own auto-link (to its slug); the scan also groups one naming another slug.
  expect(await index.sharedAutoLinks(id)).toEqual(await ownSharedByScan(index, id));
  // Every status list pages through exactly the records in that status.
  for (const status of MATCH_STATUSES) {
    const all = await collectPages(index, id, status);
    const scanned = await recordsByScan(index, id, status);
    expect(all.sort()).toEqual(scanned.sort());
  }
}

async function collectPages(index: LinkIndex, id: string, status: MatchStatus): Promise<string[]> {
  const out: string[] = [];
  for (let offset = 0; ; offset += 7) {
    const page = await index.statusPage(id, status, offset, 7);
    out.push(...page.records.map((r) => r.recordId));
    if (offset + 7 >= page.total) break;
  }
  return out;
}

async function recordsByScan(index: LinkIndex, id: string, status: MatchStatus): Promise<string[]> {
  return (await index.recordIdsByScan(id)).filter(([, s]) => s === status).map(([r]) => r);
}

async function ownSharedByScan(index: LinkIndex, id: string) {
  const groups = await index.sharedAutoLinksByScan(id);
  const ids = [...new Set(groups.flatMap((g) => g.records.map((r) => r.recordId)))];
  const [slugs, autos] = await Promise.all([index.slugsOf(id, ids), index.autoLinksOf(id, ids)]);
  const own = new Map(ids.map((r, i) => [r, slugs[i] !== null && slugs[i] === autos[i]]));
  return groups
    .map((g) => ({ ...g, records: g.records.filter((r) => own.get(r.recordId)) }))
    .filter((g) => g.records.length > 1);
}

/** Deletes the kept counts, as an installation written before they were kept has none. */
async function forgetCounts(id: string): Promise<void> {
  const stale = [
    ...(await redis.keys(`${keys.statusRecordsPrefix(id)}:*`)),
    keys.statusCounts(id),
    keys.sharedSlugDigests(id),
  ];
  await redis.unlink(...stale);
}

describe('status counts kept by the scripts', () => {
  const seed = reliabilitySeed();

  it(`equal a scan after random changes and kills (seed ${seed})`, async () => {
    const index = linkIndexOf(redis, keys);
    const random = seededRandom(seed);
    const id = 'prop';
    await redis.hset(keys.installation(id), 'id', id);
    for (let round = 0; round < 12; round += 1) {
      for (let i = 0; i < 25; i += 1) await randomChange(index, id, random, 0.25);
      await expectAgreement(index, id);
    }
  });

  it(`are built once for an installation written without them, beside writes and a build cut short (seed ${seed})`, async () => {
    const index = linkIndexOf(redis, keys);
    const random = seededRandom(seed + 1);
    const id = 'upgrade';
    await redis.hset(keys.installation(id), 'id', id);
    // Enough records for several build steps (50 buckets of about 40 records each).
    const many = Array.from({ length: 4_500 }, (_, i) => randomState(random, `big${i}`));
    await index.apply(id, many);
    for (let i = 0; i < 40; i += 1) await randomChange(index, id, random, 0.25);
    await forgetCounts(id);
    expect(await index.statuses.isBuilt(id)).toBe(false);

    // A build killed after its second step, with writes between its steps.
    let steps = 0;
    await expect(
      index.statuses.build(id, async () => {
        steps += 1;
        for (let i = 0; i < 3; i += 1) await randomChange(index, id, random, 0.25);
        if (steps === 2) throw new Killed();
      }),
    ).rejects.toBeInstanceOf(Killed);
    expect(await index.statuses.isBuilt(id)).toBe(false);

    // The next read builds again (with writes between its steps too), once.
    await index.statuses.build(id, async () => {
      for (let i = 0; i < 3; i += 1) await randomChange(index, id, random, 0.25);
    });
    expect(await index.statuses.isBuilt(id)).toBe(true);
    const counts = await index.coverage(id);
    const scanned = await index.coverageByScan(id);
    expect(counts).toEqual(scanned);
    expect(Object.values(counts).reduce((a, b) => a + b, 0)).toBeGreaterThan(4_000);
    // Building again changes nothing (idempotent).
    await index.statuses.build(id);
    expect(await index.coverage(id)).toEqual(scanned);
    await expectAgreement(index, id);
  });

  it('need no build for an installation whose first states are written with them', async () => {
    const index = linkIndexOf(redis, keys);
    const id = 'fresh';
    await redis.hset(keys.installation(id), 'id', id);
    await index.apply(id, [randomState(seededRandom(seed + 3), 'r1')]);
    expect(await index.statuses.isBuilt(id)).toBe(true);
  });

  it('are built at start-up for installations written without them (buildStatusCounts)', async () => {
    const index = linkIndexOf(redis, keys);
    const id = 'startup';
    await redis.hset(keys.installation(id), 'id', id);
    const random = seededRandom(seed + 4);
    await index.apply(
      id,
      Array.from({ length: 60 }, (_, i) => randomState(random, `r${i}`)),
    );
    await forgetCounts(id);
    const logged: unknown[] = [];
    const ctx = {
      installations: { list: async () => [{ id }] },
      index,
      logger: { info: (o: unknown) => logged.push(o) },
    } as unknown as Parameters<typeof buildStatusCounts>[0];
    expect(await buildStatusCounts(ctx)).toBe(1);
    expect(await index.statuses.isBuilt(id)).toBe(true);
    expect(await redis.hget(keys.statusCounts(id), 'built')).toBe('1');
    expect(await index.coverage(id)).toEqual(await index.coverageByScan(id));
    // A second start finds nothing to build.
    expect(await buildStatusCounts(ctx)).toBe(0);
  });

  it('are built on first read when missing, with the shared slugs', async () => {
    const index = linkIndexOf(redis, keys);
    const id = 'first-read';
    await redis.hset(keys.installation(id), 'id', id);
    const random = seededRandom(seed + 2);
    await index.apply(
      id,
      Array.from({ length: 60 }, (_, i) => randomState(random, `r${i}`)),
    );
    await forgetCounts(id);
    await expectAgreement(index, id);
    expect(await index.statuses.isBuilt(id)).toBe(true);
  });

  it('score counts give the chart the same buckets as the scores', async () => {
    const index = linkIndexOf(redis, keys);
    const id = 'prop';
    const { scoreBins } = await index.statuses.read(id);
    const scores = await index.scoresByScan(id);
    expect(scoreBuckets(scores, 10).map((b) => b.count)).toEqual(
      scoreBuckets(
        [...scoreBins].flatMap(([bin, n]) => Array.from({ length: n }, () => bin)),
        10,
      ).map((b) => b.count),
    );
  });
});
