/**
 * Redis bytes of the report cache (issue 30) after an hour of one `score.changed` a second: each change marks its
 * slug (as the report-event handler does) and is read again through `ReportReader` (as its `slug-update` does),
 * against the sandbox, with every fixture report read once at the start (a first sync's reads).
 *
 *   npm run bench:report-cache -- [--speedup 60] [--seconds 3600] [--cache-seconds 600]
 *
 * Simulated time: the hour runs `--speedup` times faster, and so does the cache's bound (REPORT_CACHE_SECONDS / speedup,
 * in whole seconds, as Redis keeps it), so the cache holds what it would hold at one change a second: the reads of
 * the last REPORT_CACHE_SECONDS. Nothing else in the cache's logic depends on the clock (a read is current by its
 * report sequence number, not its age). `MEMORY USAGE <key> SAMPLES 0` over every report-cache key, sampled along
 * the way. Before issue 30 each `slug-update` job kept its reads 24 hours under `run:{ev-<job id>}`: the issue
 * measured 70-90 MB a day at this rate.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { ReportReader } from '../src/pipeline/report-reader.js';
import { closeRedis, createRedis, type RedisClient, scanTargets } from '../src/redis.js';
import { ReportClient } from '../src/reports/client.js';
import { createSandbox } from '../src/sandbox/index.js';
import { Keys } from '../src/storage/keys.js';
import { markSlugChanged } from '../src/storage/slug-changes.js';
import { REDIS_URL } from '../test/support/redis-url.js';
import { describeMachine } from './support/machine.js';
import { benchPrefix, deleteKeys } from './support/redis-keys.js';

const { values } = parseArgs({
  options: {
    speedup: { type: 'string', default: '60' },
    seconds: { type: 'string', default: '3600' },
    'cache-seconds': { type: 'string', default: '600' },
  },
});
const speedup = Number(values.speedup);
const seconds = Number(values.seconds);
const cacheSeconds = Number(values['cache-seconds']);
const scaledTtl = Math.max(1, Math.round(cacheSeconds / speedup));

async function cacheBytes(redis: RedisClient, keys: Keys): Promise<{ keys: number; bytes: number }> {
  let n = 0;
  let bytes = 0;
  for (const node of await scanTargets(redis)) {
    let cursor = '0';
    do {
      const [next, found] = await node.scan(cursor, 'MATCH', keys.reportCachePattern(), 'COUNT', 1000);
      cursor = next;
      for (const key of found) {
        const used = await node.memory('USAGE', key, 'SAMPLES', 0);
        if (typeof used === 'number') {
          n += 1;
          bytes += used;
        }
      }
    } while (cursor !== '0');
  }
  return { keys: n, bytes };
}

async function main(): Promise<void> {
  const prefix = benchPrefix('rcache');
  const redis = createRedis(REDIS_URL, 'worker');
  const keys = new Keys(prefix);
  const sandbox = createSandbox();
  const listening = await sandbox.listen(0);
  // The bench's own pace is far above a key's real limit; the sandbox's limit is not what is measured.
  sandbox.setFaults({ rateLimitPerMinute: 1_000_000 });
  const client = new ReportClient({ baseUrl: listening.url, apiKey: 'sk_sandbox_read' });
  const reader = new ReportReader(redis, keys, client, { cacheSeconds: scaledTtl });
  const slugs = sandbox.listReports().map((r) => r.slug);
  const rows: { at: number; keys: number; bytes: number }[] = [];
  const machine = await describeMachine(REDIS_URL);
  try {
    for (const slug of slugs) await reader.read(slug);
    rows.push({ at: 0, ...(await cacheBytes(redis, keys)) });
    const samples = new Set([60, 300, 600, 900, 1800, 2700, seconds]);
    const start = Date.now();
    let seed = 7;
    for (let s = 1; s <= seconds; s++) {
      seed = (seed * 48_271) % 2_147_483_647;
      const slug = slugs[seed % slugs.length]!;
      const report = sandbox.getReport(slug);
      if (report) sandbox.updateReport(slug, { score: { overall: (seed % 1000) / 10 } });
      await markSlugChanged(redis, keys, slug);
      await reader.read(slug);
      if (samples.has(s)) {
        rows.push({ at: s, ...(await cacheBytes(redis, keys)) });
        process.stderr.write(`simulated ${s} s: ${JSON.stringify(rows.at(-1))}\n`);
      }
      const due = start + (s * 1000) / speedup;
      if (due > Date.now()) await sleep(due - Date.now());
    }
  } finally {
    await listening.close();
    await deleteKeys(REDIS_URL, prefix);
    await closeRedis(redis);
  }
  console.log(`# Report cache memory: one score.changed a second (issue 30)\n`);
  console.log(machine);
  console.log(
    `\n${slugs.length} reports (the sandbox's fixtures; 404s are kept too), all read once at 0 s; then one change a second on a ` +
      `seeded-random report, read again. REPORT_CACHE_SECONDS ${cacheSeconds}, simulated ${speedup}x faster ` +
      `(Redis TTL ${scaledTtl} s).\n`,
  );
  console.log('| simulated time | report-cache keys | bytes (MEMORY USAGE) | bytes per key |');
  console.log('|---|---|---|---|');
  for (const r of rows) {
    console.log(
      `| ${r.at} s | ${r.keys} | ${r.bytes.toLocaleString('en')} | ${r.keys ? Math.round(r.bytes / r.keys) : 0} |`,
    );
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
