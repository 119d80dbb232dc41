/**
 * The admin's installation pages at scale (issue 31): an installation of N records (100,000 by default) written
 * straight into the link index, then, through the real HTTP server with the admin token, the overview's first
 * render after writes and the first and last page of every list (linked, not published, without a report, the
 * review queue), each a few times; medians. Beside them, what the overview cost before the counts were kept (a
 * scan of every state for coverage, scores and shared links) and the one-time build of the counts for an
 * installation written without them.
 *
 *   npm run bench:admin-pages -- [--records 100000] [--repeat 7] [--log-level error]
 *
 * The table goes to stdout as markdown; progress to stderr.
 */
import { parseArgs } from 'node:util';
import { startLocalSystem } from '../local/system.js';
import { MATCH_STATUSES, type MatchStatus } from '../src/fields.js';
import { deleteKeysWithPrefix } from '../src/redis.js';
import { deleteLinearHash } from '../src/storage/linear-hash.js';
import { fingerprintOf, type RecordState } from '../src/storage/record-state.js';
import { REDIS_URL } from '../test/support/redis-url.js';
import { describeMachine } from './support/machine.js';
import { median } from './support/measure.js';
import { benchPrefix } from './support/redis-keys.js';

const { values: args } = parseArgs({
  options: {
    records: { type: 'string', default: '100000' },
    repeat: { type: 'string', default: '7' },
    'log-level': { type: 'string', default: 'error' },
  },
});
const RECORDS = Number(args.records);
const REPEAT = Number(args.repeat);
const LIMIT_MS = 200;

/** The share of each status among the records (the rest, linked). */
const SHARES: [MatchStatus, number][] = [
  ['needs_review', 0.05],
  ['no_match', 0.15],
  ['not_published', 0.05],
  ['requested', 0.02],
  ['error', 0.01],
];

function statusOf(i: number): MatchStatus {
  let at = (i * 7919) % 1000;
  for (const [status, share] of SHARES) {
    if (at < share * 1000) return status;
    at -= share * 1000;
  }
  return 'matched';
}

function stateOf(i: number, round = 0): RecordState {
  const recordId = String(3_000_000 + i);
  const status = statusOf(i + round);
  // One report per linked record, but every 100th pair shares one (as namesakes do).
  const slug =
    status === 'matched' || status === 'not_published' ? `report-${i % 100 === 1 ? i - 1 : i}` : null;
  return {
    recordId,
    slug,
    status,
    score: status === 'matched' ? (i * 37) % 101 : null,
    autoLinked: status === 'matched',
    unlinkedName: slug ? null : `company ${i}`,
    review:
      status === 'needs_review'
        ? {
            recordId,
            name: `Company ${i}`,
            country: null,
            industry: null,
            candidates: [
              { slug: `cand-${i}-a`, name: `Company ${i} A`, score: 60, why: 'same name' },
              { slug: `cand-${i}-b`, name: `Company ${i} B`, score: 55, why: 'same name' },
            ],
            at: new Date().toISOString(),
          }
        : null,
    fingerprint: fingerprintOf({ name: `Company ${i}`, domain: `c${i}.example`, fields: { slug } }),
    place: { domain: `c${i % 3}.example`, country: i % 2 ? 'DE' : 'FR' },
  };
}

async function timed(run: () => Promise<unknown>): Promise<number> {
  const at = performance.now();
  await run();
  return performance.now() - at;
}

async function main(): Promise<void> {
  const prefix = benchPrefix('admin-pages');
  const logLevel = args['log-level'];
  process.stderr.write(`${RECORDS} records under ${prefix}\n`);
  const system = await startLocalSystem({ prefix, companies: 20, workers: 0, logLevel, firstSync: false });
  const { ctx, installationId: id } = system;
  try {
    const writeStart = Date.now();
    for (let i = 0; i < RECORDS; i += 5_000) {
      await ctx.index.apply(
        id,
        Array.from({ length: Math.min(5_000, RECORDS - i) }, (_, j) => stateOf(i + j)),
      );
    }
    process.stderr.write(`  written in ${((Date.now() - writeStart) / 1000).toFixed(1)} s\n`);
    const coverage = await ctx.index.coverage(id);
    const headers = { authorization: `Bearer ${ctx.config.adminToken}` };
    const get = async (path: string) => {
      const res = await fetch(`${system.appUrl}/admin/installations/${encodeURIComponent(id)}${path}`, {
        headers,
        redirect: 'manual',
      });
      const text = await res.text();
      if (res.status !== 200) throw new Error(`${path}: ${res.status} ${text.slice(0, 200)}`);
      return text;
    };
    await get(''); // warm: the process's first request compiles its routes and views

    const rows: { what: string; ms: number[] }[] = [];
    // The overview's first render after writes: each time, 200 records change status first.
    const afterWrites: number[] = [];
    for (let r = 1; r <= REPEAT; r += 1) {
      await ctx.index.apply(
        id,
        Array.from({ length: 200 }, (_, j) => stateOf((r * 997 + j * 131) % RECORDS, r)),
      );
      afterWrites.push(await timed(() => get('')));
    }
    rows.push({ what: 'overview, first render after 200 writes', ms: afterWrites });

    const lists: [string, string, string, MatchStatus | 'review', number][] = [
      ['linked records', '/links', 'linked-page', 'matched', 20],
      ['reports not published', '/links', 'np-page', 'not_published', 20],
      ['companies without a report', '/requests', 'nm-page', 'no_match', 20],
      ['review queue', '/review', 'page', 'review', 20],
    ];
    for (const [label, path, param, status, per] of lists) {
      const total =
        status === 'review' ? await ctx.index.reviews.count(id) : (await ctx.index.coverage(id))[status];
      const last = Math.max(1, Math.ceil(total / per));
      for (const [which, page] of [
        ['first', 1],
        ['last', last],
      ] as const) {
        const ms: number[] = [];
        for (let r = 0; r < REPEAT; r += 1) ms.push(await timed(() => get(`${path}?${param}=${page}`)));
        rows.push({ what: `${label}, ${which} page (${page} of ${last})`, ms });
      }
    }

    // What the kept counts and lists cost in Redis, beside the record states themselves.
    const bytesOf = async (pattern: string) => {
      const found = await (ctx.redis as unknown as { keys(p: string): Promise<string[]> }).keys(pattern);
      let sum = 0;
      for (const key of found)
        sum += Number((await ctx.redis.call('MEMORY', 'USAGE', key, 'SAMPLES', '0')) ?? 0);
      return sum;
    };
    const countBytes =
      (await bytesOf(`${ctx.keys.statusRecordsPrefix(id)}:*`)) +
      (await bytesOf(ctx.keys.statusCounts(id))) +
      (await bytesOf(ctx.keys.sharedSlugDigests(id)));
    const stateBytes = await bytesOf(`${ctx.keys.recordStates(id)}*`);

    // Before: the overview scanned every state three times.
    const scans: number[] = [];
    for (let r = 0; r < 3; r += 1) {
      scans.push(
        await timed(() =>
          Promise.all([
            ctx.index.coverageByScan(id),
            ctx.index.scoresByScan(id),
            ctx.index.sharedAutoLinksByScan(id),
          ]),
        ),
      );
    }
    const kept: number[] = [];
    for (let r = 0; r < REPEAT; r += 1) {
      kept.push(await timed(() => Promise.all([ctx.index.statuses.read(id), ctx.index.sharedAutoLinks(id)])));
    }

    // An installation written by the version before: no counts. The first read builds them once.
    const before = await ctx.index.coverageByScan(id);
    for (const status of MATCH_STATUSES)
      await deleteLinearHash(ctx.redis, ctx.index.statuses.stem(id, status));
    await ctx.redis.unlink(ctx.keys.statusCounts(id), ctx.keys.sharedSlugDigests(id));
    const build = await timed(() => get(''));
    const rebuilt = await ctx.index.coverage(id);
    const agree = MATCH_STATUSES.every((s) => rebuilt[s] === before[s]);

    const out: string[] = [];
    out.push(`Machine: ${await describeMachine(REDIS_URL)}`, '');
    out.push(
      `${RECORDS.toLocaleString('en')} records: ${MATCH_STATUSES.map((s) => `${s} ${coverage[s].toLocaleString('en')}`).join(', ')}; medians of ${REPEAT} (limit ${LIMIT_MS} ms).`,
      '',
    );
    out.push('| request | median ms | max ms | under 200 ms |', '|---|---:|---:|---|');
    for (const row of rows) {
      const m = median(row.ms);
      out.push(
        `| ${row.what} | ${m.toFixed(1)} | ${Math.max(...row.ms).toFixed(1)} | ${m < LIMIT_MS ? 'yes' : '**no**'} |`,
      );
    }
    const scanMs = median(scans);
    const keptMs = median(kept);
    out.push(
      '',
      `Coverage, scores and shared links: ${keptMs.toFixed(1)} ms from the kept counts against ${scanMs.toFixed(0)} ms by a scan of every state (median of 3), ${(scanMs / keptMs).toFixed(0)}× less.`,
      `Redis for the kept counts, status lists and shared slugs: ${(countBytes / RECORDS).toFixed(1)} bytes per record (the record states: ${(stateBytes / RECORDS).toFixed(1)}).`,
      `The one-time build for an installation written without counts, inside its first overview: ${build.toFixed(0)} ms${agree ? '' : ' (counts disagree!)'}.`,
    );
    process.stdout.write(`${out.join('\n')}\n`);
  } finally {
    await system.close();
    await deleteKeysWithPrefix(REDIS_URL, prefix);
  }
}

main().catch((err) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
