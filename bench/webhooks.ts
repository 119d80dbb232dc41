/**
 * Webhook benchmark: how many signed report-service events `POST /webhooks/reports` acknowledges per second,
 * with what latency, and how long a `score.changed` takes to reach the CRM record.
 *
 *   npm run bench:webhooks -- [--rounds 3] [--duration 10] [--connections 10] [--warmup 3] [--samples 50]
 *                             [--companies 300] [--workers 1] [--log-level error]
 *
 * The local system (sandbox, local HubSpot, server and workers in one process, as `start` runs them) lives in
 * a child process; autocannon runs here, so the load generator and the server do not share an event loop
 * (they do share the machine's cores). Every request carries a distinct, validly signed Standard Webhooks
 * event, precomputed before the round starts. See docs/benchmarks.md.
 */
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { intOption } from '../src/cli/args.js';
import { UsageError } from '../src/cli/errors.js';
import { REDIS_URL } from '../test/support/redis-url.js';
import type {
  WebhookSystemConfig,
  WebhookSystemProtocol,
  WebhookSystemReady,
} from './children/webhook-system.js';
import { describeMachine } from './support/machine.js';
import { fixed, markdownTable, median, percentile } from './support/measure.js';
import { benchPrefix, deleteKeys } from './support/redis-keys.js';
import { RpcChild, siblingModule } from './support/rpc.js';
import { type LoadResult, postSignedLoad, signedPool } from './support/signed-load.js';

/** A fresh id prefix per pool: every event of a run is new to the server. */
const benchTag = () => `bench_${randomBytes(4).toString('hex')}`;

const SYSTEM_MODULE = siblingModule(import.meta.url, './children/webhook-system');
/** Signed requests made per second of a round: more than this machine can acknowledge, so none repeats. */
const POOL_PER_SECOND = 12_000;
const TARGETS = { eventsPerSecond: 2_000, p99Ms: 25, eventToCrmP95Ms: 3_000 };

interface WebhookOptions {
  rounds: number;
  durationS: number;
  connections: number;
  warmupS: number;
  samples: number;
  companies: number;
  workers: number;
  logLevel: string;
}

function parseOptions(argv: string[]): WebhookOptions {
  const { values } = parseArgs({
    args: argv,
    options: {
      rounds: { type: 'string' },
      duration: { type: 'string' },
      connections: { type: 'string' },
      warmup: { type: 'string' },
      samples: { type: 'string' },
      companies: { type: 'string' },
      workers: { type: 'string' },
      'log-level': { type: 'string', default: 'error' },
    },
  });
  return {
    rounds: intOption('rounds', values.rounds, 3, 1, 20),
    durationS: intOption('duration', values.duration, 10, 1, 300),
    connections: intOption('connections', values.connections, 10, 1, 1_000),
    warmupS: intOption('warmup', values.warmup, 3, 0, 60),
    samples: intOption('samples', values.samples, 50, 1, 10_000),
    companies: intOption('companies', values.companies, 300, 10, 100_000),
    workers: intOption('workers', values.workers, 1, 0, 8),
    logLevel: values['log-level'] ?? 'error',
  };
}

type Round = LoadResult;

function progress(line: string): void {
  process.stderr.write(`${line}\n`);
}

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  const redisUrl = REDIS_URL;
  const prefix = benchPrefix('webhooks');
  const machine = await describeMachine(redisUrl);
  const config: WebhookSystemConfig = {
    companies: options.companies,
    prefix,
    redisUrl,
    workers: options.workers,
    logLevel: options.logLevel,
    timeoutMs: 300_000,
  };
  progress(
    `starting a local system with ${options.companies} companies and waiting for its first backfill...`,
  );
  let system: RpcChild<WebhookSystemProtocol, WebhookSystemReady> | undefined;
  const cleanup = async () => {
    await system?.stop();
    await deleteKeys(redisUrl, prefix);
  };
  process.once('SIGINT', () => {
    progress('interrupted: stopping the local system and deleting the run keys');
    void cleanup().finally(() => process.exit(130));
  });
  try {
    system = await RpcChild.start<WebhookSystemProtocol, WebhookSystemReady>(SYSTEM_MODULE, config, {
      timeoutMs: 360_000,
    });
    const url = `${system.ready.appUrl}/webhooks/reports`;
    const slugs = system.ready.slugs;

    // First on a quiet system: after a flood, the re-reads it caused may have spent the sandbox's minute.
    progress(`event to CRM: ${options.samples} score changes, one at a time`);
    const trip = await system.call(
      'eventToCrm',
      { samples: options.samples, perSampleTimeoutMs: 15_000 },
      options.samples * 16_000,
    );

    if (options.warmupS > 0) {
      progress(`warm-up: ${options.warmupS} s`);
      await postSignedLoad(
        url,
        signedPool(system.ready.secret, slugs, options.warmupS * POOL_PER_SECOND, benchTag()),
        options.connections,
        options.warmupS,
      );
      await system.call('drain', { timeoutMs: 300_000 }, 310_000);
    }
    const rounds: (Round & { drainS: number; accepted: number; duplicates: number })[] = [];
    for (let r = 1; r <= options.rounds; r++) {
      const pool = signedPool(system.ready.secret, slugs, options.durationS * POOL_PER_SECOND, benchTag());
      progress(`round ${r}/${options.rounds}: ${options.durationS} s, ${options.connections} connections`);
      const before = await system.call('outcomes', null);
      const round = await postSignedLoad(url, pool, options.connections, options.durationS);
      // Rounds start with an empty queue: what the workers still had to do is reported, not carried over.
      const { waitedMs } = await system.call('drain', { timeoutMs: 300_000 }, 310_000);
      const after = await system.call('outcomes', null);
      rounds.push({
        ...round,
        drainS: waitedMs / 1000,
        accepted: (after.accepted ?? 0) - (before.accepted ?? 0),
        duplicates: (after.duplicate ?? 0) - (before.duplicate ?? 0),
      });
    }
    const accepted = rounds.reduce((a, r) => a + r.accepted, 0);
    const duplicates = rounds.reduce((a, r) => a + r.duplicates, 0);
    // The workers work during the round and after it until the queue is empty.
    const processed = rounds.map((r) => r.accepted / (options.durationS + r.drainS));

    const ackMedian = median(rounds.map((r) => r.ackedPerSecond));
    const p50Median = median(rounds.map((r) => r.p50Ms));
    const p99Median = median(rounds.map((r) => r.p99Ms));
    const tripP50 = median(trip.latenciesMs);
    const tripP95 = percentile(trip.latenciesMs, 95);
    const out = [
      `Machine: ${machine}.`,
      '',
      `Load: autocannon, ${options.connections} connections, ${options.rounds} rounds of ${options.durationS} s after a ` +
        `${options.warmupS} s warm-up; each request a distinct score.changed event signed with the Standard Webhooks ` +
        `scheme. The system under load: server and ${options.workers} worker set(s) in one process, ` +
        `${options.companies} companies linked; the workers process the events while the server takes more. ` +
        'Event to CRM: measured first, on the quiet system, one change at a time.',
      '',
      markdownTable(
        [
          'round',
          'acknowledged events/s',
          'p50 latency',
          'p99 latency',
          'non-2xx',
          'socket errors',
          'queue drained after',
          'events processed/s',
        ],
        [
          ...rounds.map((r, i) => [
            String(i + 1),
            fixed(r.ackedPerSecond, 0),
            `${fixed(r.p50Ms, 1)} ms`,
            `${fixed(r.p99Ms, 1)} ms`,
            String(r.non2xx),
            String(r.errors),
            `${fixed(r.drainS, 1)} s`,
            fixed(processed[i] ?? Number.NaN, 0),
          ]),
          [
            '**median**',
            `**${fixed(ackMedian, 0)}**`,
            `**${fixed(p50Median, 1)} ms**`,
            `**${fixed(p99Median, 1)} ms**`,
            '',
            '',
            '',
            `**${fixed(median(processed), 0)}**`,
          ],
        ],
      ),
      '',
      `Server-side count over the rounds: ${accepted} events accepted and queued, ${duplicates} duplicates.`,
      '',
      markdownTable(
        ['score.changed to CRM record', 'samples', 'p50', 'p95', 'max', 'missed (> 15 s)'],
        [
          [
            'sandbox change → signed event → queue → report re-read → CRM write',
            String(trip.latenciesMs.length),
            `${fixed(tripP50, 0)} ms`,
            `${fixed(tripP95, 0)} ms`,
            `${fixed(trip.latenciesMs.length > 0 ? Math.max(...trip.latenciesMs) : Number.NaN, 0)} ms`,
            String(trip.missed),
          ],
        ],
      ),
      '',
      markdownTable(
        ['target', 'this run', 'met'],
        [
          [
            `≥ ${TARGETS.eventsPerSecond} verified events/s acknowledged`,
            fixed(ackMedian, 0),
            ackMedian >= TARGETS.eventsPerSecond ? 'yes' : '**no**',
          ],
          [
            `acknowledgement p99 < ${TARGETS.p99Ms} ms`,
            `${fixed(p99Median, 1)} ms`,
            p99Median < TARGETS.p99Ms ? 'yes' : '**no**',
          ],
          [
            `event to CRM p95 < ${TARGETS.eventToCrmP95Ms / 1000} s`,
            `${fixed(tripP95, 0)} ms`,
            tripP95 < TARGETS.eventToCrmP95Ms && trip.missed === 0 ? 'yes' : '**no**',
          ],
        ],
      ),
    ];
    process.stdout.write(`${out.join('\n')}\n`);
  } finally {
    await cleanup();
  }
}

try {
  await main();
} catch (err) {
  process.stderr.write(`bench:webhooks failed: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = err instanceof UsageError ? 2 : 1;
}
