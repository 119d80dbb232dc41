import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { linkIndexOf } from '../src/app/stores.js';
import { placeDigest } from '../src/matching/shared-links.js';
import { Keys } from '../src/storage/keys.js';
import { LINEAR_HASH_LOAD, scanLinearHash } from '../src/storage/linear-hash.js';
import type { LinkIndex } from '../src/storage/link-index.js';
import { expandIncludes } from '../src/storage/lua-loader.js';
import { LuaScript } from '../src/storage/lua-script.js';
import {
  digestFingerprint,
  fingerprintOf,
  type RecordState,
  sameFingerprint,
} from '../src/storage/record-state.js';
import { redisWithFreshPrefixes } from './support/redis-prefixes.js';

const { redis, freshPrefix } = redisWithFreshPrefixes('lh');

/** The library's own operations, as the product's scripts use them: ARGV op, then fields (and values). */
const OPS = new LuaScript(
  'linear-hash-ops',
  expandIncludes(`-- @include linear-hash
local M = lh_open(KEYS[1])
local out = {}
if ARGV[1] == 'set' then
  for i = 2, #ARGV, 2 do lh_set(M, ARGV[i], ARGV[i + 1]) end
elseif ARGV[1] == 'del' then
  for i = 2, #ARGV do lh_del(M, ARGV[i]) end
else
  for i = 2, #ARGV do out[#out + 1] = lh_get(M, ARGV[i]) end
end
lh_close(M)
return out
`),
);
const opsReply = z.array(z.string().nullable());

async function set(stem: string, entries: [string, string][]): Promise<void> {
  await OPS.run(redis(), [stem], ['set', ...entries.flat()], opsReply);
}
async function get(stem: string, fields: string[]): Promise<(string | null)[]> {
  const raw = await OPS.run(redis(), [stem], ['get', ...fields], opsReply);
  return fields.map((_, i) => raw[i] ?? null);
}
async function meta(stem: string): Promise<{ k: number; p: number; n: number }> {
  const [k, p, n] = await redis().hmget(stem, 'k', 'p', 'n');
  return { k: Number(k), p: Number(p), n: Number(n) };
}
async function bucketKeys(stem: string): Promise<string[]> {
  const { k, p } = await meta(stem);
  return Array.from({ length: 2 ** k + p }, (_, b) => `${stem}:${b}`);
}

describe('linear-hash buckets', () => {
  it('grows through many splits with every value still readable, each bucket a small listpack', async () => {
    const stem = `${freshPrefix()}:map`;
    const entries: [string, string][] = Array.from({ length: 5_000 }, (_, i) => [
      `${100_000 + i}`,
      `v${i}|x`,
    ]);
    for (let i = 0; i < entries.length; i += 250) await set(stem, entries.slice(i, i + 250));

    const m = await meta(stem);
    expect(m.n).toBe(5_000);
    const buckets = await bucketKeys(stem);
    // Split one bucket at a time: the average load stays at LOAD at most, and past several levels.
    expect(buckets.length).toBeGreaterThanOrEqual(Math.ceil(5_000 / LINEAR_HASH_LOAD));
    expect(m.k).toBeGreaterThanOrEqual(6);
    const sizes = await Promise.all(buckets.map((b) => redis().hlen(b)));
    expect(sizes.reduce((a, b) => a + b, 0)).toBe(5_000);
    expect(Math.max(...sizes)).toBeLessThan(128);
    const encodings = await Promise.all(buckets.map((b) => redis().object('ENCODING', b)));
    expect(new Set(encodings)).toEqual(new Set(['listpack']));

    expect(
      await get(
        stem,
        entries.map(([f]) => f),
      ),
    ).toEqual(entries.map(([, v]) => v));
    const scanned = new Map<string, string>();
    await scanLinearHash(redis(), stem, (f, v) => {
      scanned.set(f, v);
      return true;
    });
    expect(scanned).toEqual(new Map(entries));
  });

  it('deletes, overwrites, and keeps values too long for a listpack beside the buckets', async () => {
    const stem = `${freshPrefix()}:map`;
    await set(
      stem,
      Array.from({ length: 300 }, (_, i) => [`r${i}`, `${i}`]),
    );
    await OPS.run(redis(), [stem], ['del', ...Array.from({ length: 100 }, (_, i) => `r${i}`)], opsReply);
    const long = 'x'.repeat(200);
    await set(stem, [
      ['r150', long],
      ['r151', 'short again'],
    ]);
    expect((await meta(stem)).n).toBe(199);
    expect(await get(stem, ['r0', 'r99', 'r100', 'r150', 'r151'])).toEqual([
      null,
      null,
      '100',
      long,
      'short again',
    ]);
    expect(await redis().hget(`${stem}:big`, 'r150')).toBe(long);
    // Back to a short value: out of `big`, into its bucket.
    await set(stem, [['r150', 'short']]);
    expect(await redis().hexists(`${stem}:big`, 'r150')).toBe(0);
    expect((await meta(stem)).n).toBe(200);
    const encodings = await Promise.all((await bucketKeys(stem)).map((b) => redis().object('ENCODING', b)));
    expect(new Set(encodings)).toEqual(new Set(['listpack']));
  });

  it('loses nothing to concurrent writers while buckets split under them', async () => {
    const stem = `${freshPrefix()}:map`;
    const writers = Array.from({ length: 8 }, (_, w) =>
      (async () => {
        for (let batch = 0; batch < 10; batch++) {
          await set(
            stem,
            Array.from({ length: 50 }, (_, i) => [`w${w}-${batch}-${i}`, `${w}:${batch}:${i}`]),
          );
        }
      })(),
    );
    await Promise.all(writers);
    const fields = Array.from({ length: 8 }, (_, w) =>
      Array.from({ length: 10 }, (_, b) => Array.from({ length: 50 }, (_, i) => `w${w}-${b}-${i}`)),
    ).flat(2);
    expect((await meta(stem)).n).toBe(4_000);
    const values = await get(stem, fields);
    expect(values.filter((v) => v === null)).toEqual([]);
    expect(values[fields.indexOf('w7-9-49')]).toBe('7:9:49');
  });
});

function linked(recordId: string, slug: string, i: number): RecordState {
  return {
    recordId,
    slug,
    status: 'matched',
    score: 50 + (i % 50) / 10,
    autoLinked: i % 2 === 0,
    unlinkedName: null,
    review: null,
    fingerprint: fingerprintOf({ name: `Company ${i}`, domain: `c${i}.example`, fields: { slug } }),
    place: { domain: `c${i}.example`, country: i % 3 === 0 ? null : 'Germany' },
  };
}

describe('LinkIndex on linear-hash buckets', () => {
  async function installed(prefix: string, id: string): Promise<LinkIndex> {
    const keys = new Keys(prefix);
    await redis().hset(keys.installation(id), 'id', id);
    return linkIndexOf(redis(), keys);
  }

  it('keeps 3,000 records, their reverse index and the fan-out through the splits', async () => {
    const index = await installed(freshPrefix(), 'i1');
    const states = Array.from({ length: 3_000 }, (_, i) =>
      linked(`${9_000_000 + i}`, `report-${i % 700}`, i),
    );
    await index.apply('i1', states.slice(0, 1_700));
    await index.apply('i1', states.slice(1_700));
    await index.setWrittenSeqs('i1', new Map(states.map((s, i) => [s.recordId, i + 1])));

    expect(
      await index.slugsOf(
        'i1',
        states.map((s) => s.recordId),
      ),
    ).toEqual(states.map((s) => s.slug));
    expect(
      await index.writtenSeqs(
        'i1',
        states.map((s) => s.recordId),
      ),
    ).toEqual(states.map((_, i) => i + 1));
    expect(await index.slugs.recordsForSlug('i1', 'report-5')).toEqual(
      states
        .filter((s) => s.slug === 'report-5')
        .map((s) => s.recordId)
        .sort(),
    );
    expect(await index.slugs.installationsForSlug('report-699')).toEqual(['i1']);
    expect((await index.coverage('i1')).matched).toBe(3_000);
    expect((await index.scores('i1')).length).toBe(3_000);

    // Moving a record to another slug, then forgetting records: the reverse index follows.
    const moved = { ...states[5]!, slug: 'report-elsewhere' };
    await index.apply('i1', [moved]);
    expect(await index.slugs.recordsForSlug('i1', 'report-elsewhere')).toEqual([moved.recordId]);
    expect(await index.slugs.recordsForSlug('i1', 'report-5')).not.toContain(moved.recordId);
    // The seq written before the move is kept by apply.
    expect(await index.writtenSeqs('i1', [moved.recordId])).toEqual([6]);
    await index.forget('i1', [moved.recordId, states[6]!.recordId]);
    expect(await index.slugsOf('i1', [moved.recordId, states[6]!.recordId])).toEqual([null, null]);
    expect(await index.slugs.recordsForSlug('i1', 'report-elsewhere')).toEqual([]);
    expect((await index.coverage('i1')).matched).toBe(2_998);

    const shared = await index.sharedAutoLinks('i1');
    const group = shared.find((g) => g.slug === 'report-0');
    expect(group?.records.length).toBeGreaterThan(1);
    // The digests of each record's place (the values are the CRM's: the admin page reads them there).
    expect(group?.records[0]).toEqual({
      recordId: '9000000',
      place: placeDigest({ domain: 'c0.example', country: null }),
    });
    expect(group?.records[1]).toEqual({
      recordId: '9000700',
      place: placeDigest({ domain: 'c700.example', country: 'Germany' }),
    });
  });

  it('reads back fingerprints, review items and unlinked names as they were written', async () => {
    const prefix = freshPrefix();
    const index = await installed(prefix, 'i2');
    const review = {
      recordId: 'r1',
      name: 'Acme | Robotics',
      country: null,
      candidates: [
        {
          slug: 'acme-robotics',
          name: 'Acme Robotics',
          industry: 'Automation',
          stage: null,
          score: 30.2,
          why: 'same name; same country, DE ~ 100%',
        },
        { slug: 'acme-us', name: 'Acme', geography: 'Austin, United States' },
      ],
      at: '2026-11-25T14:41:41.410Z',
    };
    const unlinked: RecordState = {
      recordId: 'r1',
      slug: null,
      status: 'needs_review',
      score: null,
      autoLinked: false,
      unlinkedName: 'acme | robotics 100%',
      review,
      fingerprint: fingerprintOf({ name: 'Acme | Robotics', domain: '', fields: {} }),
    };
    await index.apply('i2', [
      unlinked,
      { ...unlinked, recordId: 'r2', review: { ...review, recordId: 'r2' } },
    ]);
    expect(await index.reviews.item('i2', 'r1')).toEqual(review);
    const odd = {
      recordId: 'r9',
      name: null,
      industry: '',
      candidates: [{ slug: 'a,b;c|d%', name: 'Odd', score: null }],
      at: 'not a time',
    };
    await index.apply('i2', [{ ...unlinked, recordId: 'r9', review: odd }]);
    expect(await index.reviews.item('i2', 'r9')).toEqual(odd);
    await index.forget('i2', ['r9']);
    expect(await index.reviews.items('i2')).toHaveLength(2);
    expect(await index.unlinkedNames('i2')).toEqual(
      new Map([
        ['r1', 'acme | robotics 100%'],
        ['r2', 'acme | robotics 100%'],
      ]),
    );
    expect(await index.recordsWithStatus('i2', 'needs_review', 1)).toHaveLength(1);
    const [fp] = await index.fingerprints('i2', ['r1']);
    expect(fp).not.toBeNull();

    // The candidates' details go with the last item offering them.
    await index.apply('i2', [{ ...unlinked, review: null }]);
    expect(await index.reviews.item('i2', 'r2')).toEqual({ ...review, recordId: 'r2' });
    await index.forget('i2', ['r2']);
    expect(await redis().hlen(new Keys(prefix).reviewCandidates('i2'))).toBe(0);
  });

  it('keeps review reasons word for word and tells apart two candidates whose slugs share a reference', async () => {
    const prefix = freshPrefix();
    const keys = new Keys(prefix);
    const index = await installed(prefix, 'i3');
    // Two slugs whose SHA-1 begin with the same 5 hex digits: the first reference either would get.
    const seen = new Map<string, string>();
    let clash: [string, string] | null = null;
    for (let i = 0; clash === null; i += 1) {
      const slug = `clash-${i}`;
      const ref = createHash('sha1').update(slug).digest('hex').slice(0, 5);
      const other = seen.get(ref);
      if (other) clash = [other, slug];
      seen.set(ref, slug);
    }
    const reasons = [
      'same name written with different spacing; same country, city, industry',
      "one name is the initials of the other; in DE, the record says FR; in FR, where the record's domain ends",
      "in another city; in another industry; spells the record's domain; in US, the record's domain ends in DE",
      'control \u0001 and \u001f characters, 100% ~ | ; , kept',
      '',
    ];
    const item = (recordId: string, slugs: string[]) => ({
      recordId,
      name: `Company ${recordId}`,
      candidates: slugs.map((slug, i) => ({
        slug,
        name: `Report ${slug}`,
        score: i,
        why: reasons[i % reasons.length],
      })),
      at: '2026-11-26T04:00:00.000Z',
    });
    const state = (review: ReturnType<typeof item>): RecordState => ({
      recordId: review.recordId,
      slug: null,
      status: 'needs_review',
      score: null,
      autoLinked: false,
      unlinkedName: review.name.toLowerCase(),
      review,
      fingerprint: fingerprintOf({ name: review.name, domain: '', fields: {} }),
    });
    const first = item('r1', [clash[0], 'shared', 'a', 'b', 'c']);
    const second = item('r2', [clash[1], 'shared']);
    await index.apply('i3', [state(first), state(second)]);
    expect(await index.reviews.itemsOf('i3', ['r1', 'r2'])).toEqual([first, second]);
    // The reasons' usual phrases take a character each: the first item is far shorter than its text.
    let stored: string | undefined;
    await scanLinearHash(redis(), keys.review('i3'), (recordId, value) => {
      if (recordId === 'r1') stored = value;
      return stored === undefined;
    });
    expect(stored!.length).toBeLessThan(JSON.stringify(first.candidates.map((c) => [c.score, c.why])).length);
    // The shared candidate and the clashing one stay while an item names them.
    await index.forget('i3', ['r1']);
    expect(await index.reviews.item('i3', 'r2')).toEqual(second);
    await index.forget('i3', ['r2']);
    expect(await redis().hlen(keys.reviewCandidates('i3'))).toBe(0);
  });

  it('reads fingerprints of both digest lengths as the same as the present digests of the same values', async () => {
    const prefix = freshPrefix();
    const keys = new Keys(prefix);
    const index = await installed(prefix, 'i4');
    const old = (value: string) => createHash('sha1').update(value).digest('base64url').slice(0, 4);
    const values = [
      { name: 'Acme', domain: 'acme.example', fields: { slug: 'acme' } },
      { name: 'Acme', domain: '', fields: { slug: 'acme' } },
      { name: '', domain: '', fields: {} },
      { name: 'Acme', domain: 'acme.example', fields: { slug: 'set-by-hand' } },
    ];
    // Written by the version before: 4 characters a part, the slug's only when it is not the state's.
    await set(keys.recordStates('i4'), [
      ['1', `1|acme|m|||${old('Acme')}${old('acme.example')}`],
      ['2', `1|acme|m|||${old('Acme')}${old('')}`],
      ['3', `1||n|||${old('')}${old('')}`],
      ['4', `1|acme|m|||${old('Acme')}${old('acme.example')}${old('set-by-hand')}`],
    ]);
    const read = await index.fingerprints('i4', ['1', '2', '3', '4']);
    expect(read).toEqual(values.map((v) => digestFingerprint(fingerprintOf(v))));
    // Written now: the same digests read back, and a part that changes is told.
    await index.apply(
      'i4',
      values.map((v, i) => ({
        recordId: String(i + 1),
        slug: i === 2 ? null : 'acme',
        status: i === 2 ? 'no_match' : 'matched',
        score: null,
        autoLinked: false,
        unlinkedName: null,
        review: null,
        fingerprint: fingerprintOf(v),
      })),
    );
    expect(await index.fingerprints('i4', ['1', '2', '3', '4'])).toEqual(read);
    const renamed = digestFingerprint(fingerprintOf({ ...values[1]!, name: 'Acme Robotics' }));
    expect(sameFingerprint(read[1]!, renamed)).toBe(false);
    expect(read[1]!.domain).toBe(renamed.domain);
  });

  it('writes nothing for an installation removed while a batch was still running', async () => {
    const prefix = freshPrefix();
    const keys = new Keys(prefix);
    const index = await installed(prefix, 'gone');
    await index.apply('gone', [linked('1', 'report-a', 0)]);
    // The removal: the installation's hash first, then its keys.
    await redis().unlink(keys.installation('gone'));
    await index.slugs.forgetInstallation('gone');
    const left = await redis().keys(`${keys.inst('gone')}:*`);
    await redis().unlink(...left);

    // The batch that was still running writes its state now.
    await index.apply('gone', [linked('2', 'report-b', 1)]);
    await index.setWrittenSeqs('gone', new Map([['2', 7]]));
    await index.markAutoLink('gone', '2', 'report-b');
    await index.pollCursors.set('gone', { cursor: 'c', since: 1 });
    expect(await redis().keys(`${keys.inst('gone')}:*`)).toEqual([]);
    expect(await index.slugs.installationsForSlug('report-a')).toEqual([]);
    expect(await index.slugs.installationsForSlug('report-b')).toEqual([]);
  });
});
