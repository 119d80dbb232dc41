/**
 * Soak: a backfill of 50,000 companies by two `report-connector worker` processes while 500 signed
 * `score.changed` webhooks per second arrive for 5 minutes, and a report's score really changes every two
 * seconds. Reports the webhook acknowledgement latency (during the backfill and after it), the memory of the
 * worker processes and of the server over time, and a final correctness check: every record in the state
 * the seed says, and every linked record holding its report's current score. Nothing lost, memory flat.
 *
 *   npm run soak -- [--companies 50000] [--minutes 5] [--rate 500] [--workers 2] [--change-every-ms 2000]
 *                   [--sandbox-rate 30000] [--redis-url redis://127.0.0.1:6379]
 *
 * The server, the report sandbox and the local HubSpot run in this process (as `demo` runs them); the workers
 * are separate processes (`node dist/src/cli/bin.js worker`, so run `npm run build` first: the npm script
 * does); the webhook sender runs on a worker thread of its own so its event loop does not queue behind the
 * server's. Exit status 0 when nothing was lost, 1 otherwise. See docs/reliability.md.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { type LocalSystem, startLocalSystem, workerEnvFor } from '../local/system.js';
import { intOption } from '../src/cli/args.js';
import { UsageError } from '../src/cli/errors.js';
import { deleteKeysWithPrefix } from '../src/redis.js';
import { signStandardWebhook, webhookSigningKey } from '../src/sandbox/webhook-signing.js';
import { isAsExpected } from '../test/support/expectations.js';
import { REDIS_URL } from '../test/support/redis-url.js';

interface SoakOptions {
  companies: number;
  minutes: number;
  rate: number;
  workers: number;
  changeEveryMs: number;
  sandboxRate: number;
  redisUrl: string;
}

interface SenderInput {
  url: string;
  secret: string;
  slugs: string[];
  rate: number;
  durationMs: number;
}

/** One second of the sender's traffic, sent to the main thread as it goes. */
interface SenderSecond {
  kind: 'second';
  at: number;
  sent: number;
  latencies: number[];
  non2xx: number;
  errors: number;
}

interface SenderDone {
  kind: 'done';
  sent: number;
  non2xx: number;
  errors: number;
  statuses: Record<string, number>;
}

// ---- the sender (worker thread) ------------------------------------------------------------------------

/** Sends `rate` events a second, paced in 10 ms steps; a slug the main thread names goes out next. */
async function runSender(input: SenderInput): Promise<void> {
  const port = parentPort!;
  const urgent: string[] = [];
  port.on('message', (slug: string) => urgent.push(slug));
  const tag = randomBytes(4).toString('hex');
  const key = webhookSigningKey(input.secret);
  const statuses: Record<string, number> = {};
  let sent = 0;
  let totalNon2xx = 0;
  let totalErrors = 0;
  let second: SenderSecond = { kind: 'second', at: Date.now(), sent: 0, latencies: [], non2xx: 0, errors: 0 };
  const inFlight = new Set<Promise<void>>();
  const started = Date.now();
  const flush = () => {
    port.postMessage(second);
    second = { kind: 'second', at: Date.now(), sent: 0, latencies: [], non2xx: 0, errors: 0 };
  };

  const sendOne = (n: number) => {
    const slug = urgent.shift() ?? input.slugs[Math.floor(Math.random() * input.slugs.length)]!;
    const id = `msg_soak_${tag}_${n}`;
    const body = JSON.stringify({
      id,
      type: 'score.changed',
      created_at: new Date().toISOString(),
      data: { slug },
    });
    const timestamp = Math.floor(Date.now() / 1000);
    const t0 = performance.now();
    const p = fetch(input.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'webhook-id': id,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': signStandardWebhook(key, id, timestamp, body),
      },
      body,
    })
      .then(async (res) => {
        await res.arrayBuffer();
        second.latencies.push(performance.now() - t0);
        statuses[res.status] = (statuses[res.status] ?? 0) + 1;
        if (res.status < 200 || res.status >= 300) {
          second.non2xx += 1;
          totalNon2xx += 1;
        }
      })
      .catch(() => {
        second.errors += 1;
        totalErrors += 1;
      })
      .finally(() => inFlight.delete(p));
    inFlight.add(p);
    sent += 1;
    second.sent += 1;
  };

  while (Date.now() - started < input.durationMs) {
    const due = Math.floor(((Date.now() - started) / 1000) * input.rate);
    while (sent < due) sendOne(sent);
    if (Date.now() - second.at >= 1000) flush();
    await sleep(10);
  }
  while (inFlight.size > 0) await Promise.all([...inFlight]);
  flush();
  const done: SenderDone = { kind: 'done', sent, non2xx: totalNon2xx, errors: totalErrors, statuses };
  port.postMessage(done);
}

// ---- the soak (main thread) ----------------------------------------------------------------------------

function parseOptions(argv: string[]): SoakOptions {
  const { values } = parseArgs({
    args: argv,
    options: {
      companies: { type: 'string' },
      minutes: { type: 'string' },
      rate: { type: 'string' },
      workers: { type: 'string' },
      'change-every-ms': { type: 'string' },
      'sandbox-rate': { type: 'string' },
      'redis-url': { type: 'string' },
    },
  });
  return {
    companies: intOption('companies', values.companies, 50_000, 10, 500_000),
    minutes: intOption('minutes', values.minutes, 5, 1, 120),
    rate: intOption('rate', values.rate, 500, 1, 5_000),
    workers: intOption('workers', values.workers, 2, 1, 16),
    changeEveryMs: intOption('change-every-ms', values['change-every-ms'], 2_000, 100, 600_000),
    sandboxRate: intOption('sandbox-rate', values['sandbox-rate'], 30_000, 60, 600_000),
    redisUrl: values['redis-url'] ?? REDIS_URL,
  };
}

function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

function mb(bytes: number): string {
  return (bytes / 1024 / 1024).toFixed(0);
}

/** Resident set size of another process (Linux /proc), or NaN where that cannot be read. */
function rssOf(pid: number): number {
  try {
    const kb = /VmRSS:\s+(\d+)\s+kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kb ? Number(kb) * 1024 : Number.NaN;
  } catch {
    return Number.NaN;
  }
}

interface WorkerChild {
  child: ChildProcess;
  log: string;
}

async function startWorker(env: Record<string, string>): Promise<WorkerChild> {
  const bin = fileURLToPath(new URL('../src/cli/bin.js', import.meta.url));
  const cwd = mkdtempSync(join(tmpdir(), 'rc-soak-worker-'));
  const child = spawn(process.execPath, [bin, 'worker'], { cwd, env, stdio: ['ignore', 'ignore', 'pipe'] });
  const worker: WorkerChild = { child, log: '' };
  child.stderr?.on('data', (chunk: Buffer) => {
    worker.log = (worker.log + chunk.toString('utf8')).slice(-100_000);
  });
  const deadline = Date.now() + 30_000;
  while (!worker.log.includes('"worker running"')) {
    if (child.exitCode !== null || Date.now() > deadline) {
      await stopWorker(worker);
      throw new Error(`a worker did not start: ${worker.log.slice(-2_000)}`);
    }
    await sleep(50);
  }
  return worker;
}

/** SIGKILL, and wait until it is gone: a worker still running would write keys after the clean-up. */
async function stopWorker(worker: WorkerChild): Promise<void> {
  const { child } = worker;
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}

/** Seed records not in the state the seed expects, and linked records whose score is not the report's. */
function correctness(system: LocalSystem): { wrong: string[]; stale: string[] } {
  const wrong: string[] = [];
  const stale: string[] = [];
  system.seed.forEach((company, i) => {
    const id = system.recordIds[i]!;
    const r = system.crm.record(id);
    const e = company.expected;
    const ok = isAsExpected(e, r);
    if (!ok) wrong.push(`${id} ${company.name}: expected ${JSON.stringify(e)}, got ${JSON.stringify(r)}`);
    if (r?.status === 'matched' && r.slug) {
      const report = system.sandbox.getReport(r.slug);
      if (!report?.published || r.score?.toFixed(6) !== report.score.overall.toFixed(6)) {
        stale.push(`${id} (${r.slug}): CRM ${r.score}, sandbox ${report?.score.overall}`);
      }
    }
  });
  return { wrong, stale };
}

async function queuesIdle(system: LocalSystem, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  let quiet = 0;
  while (Date.now() < deadline) {
    const counts = await system.ctx.queues.counts();
    const busy = Object.values(counts).some((c) => c.waiting + c.active + c.delayed > 0);
    quiet = busy ? 0 : quiet + 1;
    if (quiet >= 3) return true;
    await sleep(500);
  }
  return false;
}

interface MemorySample {
  atS: number;
  workersRss: number[];
  serverRss: number;
  serverHeap: number;
}

/** Ten seconds of acknowledgements. */
interface LatencyWindow {
  fromS: number;
  samples: number[];
  non2xx: number;
  errors: number;
}

async function soak(options: SoakOptions): Promise<number> {
  const prefix = `rc-soak-${randomBytes(4).toString('hex')}`;
  const say = (line: string) => process.stderr.write(`${line}\n`);
  say(
    `soak: ${options.companies} companies, ${options.rate} events/s for ${options.minutes} min, ${options.workers} worker processes`,
  );
  const system = await startLocalSystem({
    companies: options.companies,
    prefix,
    redisUrl: options.redisUrl,
    workers: 0,
    logLevel: 'error',
    sandboxRateLimitPerMinute: options.sandboxRate,
    env: {
      ENCRYPTION_KEY: randomBytes(32).toString('base64'),
      ADMIN_TOKEN: randomBytes(24).toString('base64url'),
    },
  });
  // The sender below stands in for the service's deliveries; the sandbox only changes reports.
  system.sandbox.configureWebhook(undefined, undefined);
  const workers: WorkerChild[] = [];
  let sender: Worker | null = null;
  const cleanUp = async () => {
    await sender?.terminate();
    await Promise.all(workers.map(stopWorker));
    await system.close();
    await deleteKeysWithPrefix(options.redisUrl, prefix);
  };
  process.once('SIGINT', () => {
    void cleanUp().finally(() => process.exit(130));
  });

  try {
    const env = workerEnvFor(system);
    for (let i = 0; i < options.workers; i++) workers.push(await startWorker(env));
    const published = system.sandbox
      .listReports()
      .filter((r) => r.published)
      .map((r) => r.slug);
    const started = Date.now();
    const elapsedS = () => Math.round((Date.now() - started) / 1000);

    let backfillDoneAtS: number | null = null;
    const windows: LatencyWindow[] = [];
    const memory: MemorySample[] = [];
    const input: SenderInput = {
      url: `${system.appUrl}/webhooks/reports`,
      secret: system.ctx.config.reports.webhookSecrets[0]!,
      slugs: published,
      rate: options.rate,
      durationMs: options.minutes * 60_000,
    };
    sender = new Worker(new URL(import.meta.url), { workerData: input });
    const done = new Promise<SenderDone>((resolve, reject) => {
      sender!.on('error', reject);
      sender!.on('message', (m: SenderSecond | SenderDone) => {
        if (m.kind === 'done') return resolve(m);
        const fromS = Math.floor((m.at - started) / 10_000) * 10;
        let w = windows.at(-1);
        if (!w || w.fromS !== fromS) {
          w = { fromS, samples: [], non2xx: 0, errors: 0 };
          windows.push(w);
        }
        w.samples.push(...m.latencies);
        w.non2xx += m.non2xx;
        w.errors += m.errors;
      });
    });

    // A real change now and then, each followed at once by an event for it.
    let changes = 0;
    const changer = setInterval(() => {
      const slug = published[Math.floor(Math.random() * published.length)]!;
      changes += 1;
      system.sandbox.updateReport(slug, { score: { overall: 10 + ((changes * 7.25) % 90) } });
      sender?.postMessage(slug);
    }, options.changeEveryMs);

    const sampler = setInterval(() => {
      const usage = process.memoryUsage();
      memory.push({
        atS: elapsedS(),
        workersRss: workers.map((w) => rssOf(w.child.pid ?? -1)),
        serverRss: usage.rss,
        serverHeap: usage.heapUsed,
      });
    }, 10_000);
    const progress = setInterval(() => {
      void (async () => {
        const [run] = await system.ctx.runs.recent(system.installationId, 1);
        if (run && (run.state === 'done' || run.state === 'stopped') && backfillDoneAtS === null)
          backfillDoneAtS = elapsedS();
        const counts = await system.ctx.queues.counts();
        const lastSamples = (windows.at(-2) ?? windows.at(-1))?.samples ?? [];
        say(
          `  ${elapsedS()} s: backfill ${run?.totals.records ?? 0}/${options.companies} (${run?.state ?? '-'}), ` +
            `queues ${JSON.stringify(counts)}, ack p99 ${percentile(lastSamples, 99).toFixed(1)} ms, ` +
            `worker RSS ${workers.map((w) => mb(rssOf(w.child.pid ?? -1))).join('/')} MB`,
        );
      })().catch((err: unknown) => say(`  progress check failed: ${String(err)}`));
    }, 10_000);

    const sent = await done;
    clearInterval(changer);
    const webhookPhaseS = elapsedS();
    say(`soak: ${sent.sent} events sent in ${webhookPhaseS} s; waiting for the backfill and the queues`);
    const deadline = Date.now() + 60 * 60_000;
    for (;;) {
      const [run] = await system.ctx.runs.recent(system.installationId, 1);
      if (run && (run.state === 'done' || run.state === 'stopped')) {
        backfillDoneAtS ??= Math.round((Date.parse(run.finishedAt ?? '') - started) / 1000);
        break;
      }
      if (Date.now() > deadline)
        throw new Error('the backfill did not end within an hour of the webhook phase');
      await sleep(1_000);
    }
    const idle = await queuesIdle(system, 30 * 60_000);
    clearInterval(sampler);
    clearInterval(progress);
    const usage = process.memoryUsage();
    memory.push({
      atS: elapsedS(),
      workersRss: workers.map((w) => rssOf(w.child.pid ?? -1)),
      serverRss: usage.rss,
      serverHeap: usage.heapUsed,
    });
    const [run] = await system.ctx.runs.recent(system.installationId, 1);
    const { wrong, stale } = correctness(system);
    const workersAlive = workers.every((w) => w.child.exitCode === null && w.child.signalCode === null);

    const all = windows.flatMap((w) => w.samples);
    const rows = windows.map((w) => ({
      fromS: w.fromS,
      duringBackfill: backfillDoneAtS === null || w.fromS + 10 <= backfillDoneAtS,
      count: w.samples.length,
      p50: percentile(w.samples, 50),
      p99: percentile(w.samples, 99),
      max: w.samples.reduce((m, v) => Math.max(m, v), 0),
      non2xx: w.non2xx,
      errors: w.errors,
    }));
    const during = rows.filter((w) => w.duringBackfill);
    const lines = [
      `## Soak result (${new Date().toISOString()})`,
      '',
      `- ${options.companies} companies, ${options.workers} worker processes, ${options.rate} signed score.changed events/s for ${options.minutes} min, a real score change every ${options.changeEveryMs} ms (${changes} in all), sandbox limit ${options.sandboxRate}/min`,
      `- backfill: ${run?.state} after ${backfillDoneAtS} s; ${run?.totals.records} records, ${run?.totals.written} written, ${run?.totals.failed} failed`,
      `- events: ${sent.sent} sent, statuses ${JSON.stringify(sent.statuses)}, ${sent.errors} transport errors`,
      `- ack latency, all: p50 ${percentile(all, 50).toFixed(1)} ms, p99 ${percentile(all, 99).toFixed(1)} ms, max ${all.reduce((m, v) => Math.max(m, v), 0).toFixed(1)} ms`,
      `- ack latency, windows during the backfill: worst p99 ${Math.max(...during.map((w) => w.p99)).toFixed(1)} ms over ${during.length} windows of 10 s`,
      `- queues idle at the end: ${idle}; worker processes alive: ${workersAlive}`,
      `- correctness: ${wrong.length} records not in their expected state, ${stale.length} linked records with a stale score`,
      '',
      '| from s | during backfill | acks | p50 ms | p99 ms | max ms | non-2xx | errors |',
      '|---:|:---:|---:|---:|---:|---:|---:|---:|',
      ...rows.map(
        (w) =>
          `| ${w.fromS} | ${w.duringBackfill ? 'yes' : 'no'} | ${w.count} | ${w.p50.toFixed(1)} | ${w.p99.toFixed(1)} | ${w.max.toFixed(1)} | ${w.non2xx} | ${w.errors} |`,
      ),
      '',
      '| at s | worker RSS MB | server process RSS MB | server heap MB |',
      '|---:|---:|---:|---:|',
      ...memory.map(
        (m) =>
          `| ${m.atS} | ${m.workersRss.map(mb).join(' / ')} | ${mb(m.serverRss)} | ${mb(m.serverHeap)} |`,
      ),
      '',
      ...wrong.slice(0, 10).map((w) => `- wrong: ${w}`),
      ...stale.slice(0, 10).map((s) => `- stale: ${s}`),
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
    const ok =
      wrong.length === 0 &&
      stale.length === 0 &&
      sent.non2xx === 0 &&
      sent.errors === 0 &&
      idle &&
      workersAlive;
    return ok ? 0 : 1;
  } finally {
    await cleanUp();
  }
}

if (isMainThread) {
  soak(parseOptions(process.argv.slice(2))).then(
    (code) => process.exit(code),
    (err: unknown) => {
      process.stderr.write(`soak failed: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exit(err instanceof UsageError ? 2 : 1);
    },
  );
} else {
  // A failure here becomes the Worker's 'error' event in the main thread, which ends the soak.
  void runSender(workerData as SenderInput);
}
