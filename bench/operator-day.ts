/**
 * The operator day (issue 30): the app installed (its first sync starts), the daily reconcile due at start-up,
 * `report-connector sync --wait` typed a few seconds later, against a report service throttling each key at
 * 25 requests a second (429 + Retry-After, 2% 503) and HubSpot at 110 requests per 10 s, a 500-company
 * portal; on HubSpot, on Salesforce and on HubSpot over a 3-master Redis Cluster. Then, with `--faults`, the
 * same on a Redis of its own (on the cluster setting, a 3-master cluster of its own without replicas) with
 * workers SIGKILLed every 5-10 s, one Redis restart (every master at once on the cluster), the service at 10
 * requests a second with 5% 503, and a signed `score.changed` every 700 ms.
 *
 *   npm run bench:operator-day -- [--crm hubspot|salesforce|cluster] [--faults | --faults-only | --events-only]
 *                                 [--no-events-during-backfill] [--quick] [--alone] [--companies 500]
 *                                 [--sync-after-ms 3000] [--lock-share 0] [--timeout-minutes 10]
 *                                 [--log-level error] [--key-rate 25] [--first-sync-only]
 *                                 [--liveness [--runs 1] [--redis-fault failover|restart] [--log-dir DIR]
 *                                  [--kill-pace kill|running]]
 *
 * `--crm` may be given more than once (all three when left out; every phase runs each one given).
 * The events-during-backfill phase (the normal day again on a fresh system, with a `score.changed` every
 * 700 ms until the first sync ends) runs with the normal phase unless `--no-events-during-backfill`, alone
 * with `--events-only`, with `--faults-only` when `--events-during-backfill` is given.
 * `--alone`: the install's first sync only (what one run does, beside what runs at once do).
 * `--key-rate`: the requests a second the sandbox allows each key (25 by default; the connector is never told).
 * `--first-sync-only`: the normal phase without its second full sync (the rate learner's figures: see
 * docs/benchmarks.md, "The key's rate, learnt").
 * `--quick`: 200 companies, 4 worker kills, events for 5 s after the backfill: a smoke run, not figures.
 * `--liveness`: the fault phase only, as the liveness bounds ask: worker kills every 5-10 s for 3 minutes, one
 * Redis restart midway (on the cluster a 3-master cluster with a replica each, the master serving the backfill
 * queue SIGKILLed and its replica promoted; `--redis-fault restart` kills every master instead), then the end
 * state watched for up to 150 s; per run, the longest stretch without a CRM write while a record has no status
 * (bound 30 s), acknowledged events lost (0), seconds from the faults' end until every record is at its end
 * state (60 s), and the workers' "stalled more than allowable limit" and "Command timed out" lines. `--runs N`
 * repeats it (a fresh Redis and system each time); `--log-dir` keeps every worker's log. `--kill-pace kill`
 * (the default) counts the 5-10 s from kill to kill, the replacement starting meanwhile; `running` from the
 * replacement's start, so that a worker always ran 5-10 s (where a worker takes seconds to start, as on a
 * loaded machine, `kill` leaves stretches with no worker running: the table shows them).
 * Tables go to stdout as markdown, progress to stderr. See docs/benchmarks.md, "Operator day (issue 30)".
 */
import { parseArgs } from 'node:util';
import { intOption } from '../src/cli/args.js';
import { UsageError } from '../src/cli/errors.js';
import { REDIS_URL } from '../test/support/redis-url.js';
import { describeMachine } from './support/machine.js';
import {
  BACKFILL_EVENT_EVERY_MS,
  type BackfillEventsFigures,
  measureEventsDuringBackfill,
} from './support/operator-day-backfill-events.js';
import {
  FAULT_DEFAULTS,
  type FaultFigures,
  LIVENESS_DEFAULTS,
  measureFaults,
} from './support/operator-day-faults.js';
import { measureNormal, type NormalFigures, type Setting } from './support/operator-day-normal.js';
import {
  backfillEventsTable,
  faultTable,
  livenessTable,
  normalTable,
} from './support/operator-day-report.js';
import { OPERATOR_DAY_DEFAULTS } from './support/operator-day-setup.js';
import { benchPrefix } from './support/redis-keys.js';

const SETTINGS: readonly Setting[] = ['hubspot', 'salesforce', 'cluster'];

interface Options {
  settings: Setting[];
  normal: boolean;
  /** Events during the first sync's backfill, a phase of its own. */
  backfillEvents: boolean;
  faults: boolean;
  quick: boolean;
  /** The install's first sync alone (no reconcile, no `sync`). */
  alone: boolean;
  /** Requests a second the sandbox allows each report key. */
  keyRate: number;
  /** The normal phase stops after the first sync (no second full sync). */
  firstSyncOnly: boolean;
  companies: number;
  syncAfterMs: number;
  lockShare: number;
  timeoutMs: number;
  logLevel: string;
  /** The liveness preset (the fault phase only). */
  liveness: boolean;
  runs: number;
  redisFault: 'restart' | 'failover';
  logDir: string | null;
  killPace: 'kill' | 'running';
}

function parseOptions(argv: string[]): Options {
  const { values } = parseArgs({
    args: argv,
    allowNegative: true,
    options: {
      crm: { type: 'string', multiple: true },
      faults: { type: 'boolean', default: false },
      'faults-only': { type: 'boolean', default: false },
      'events-only': { type: 'boolean', default: false },
      'events-during-backfill': { type: 'boolean' },
      quick: { type: 'boolean', default: false },
      alone: { type: 'boolean', default: false },
      'key-rate': { type: 'string' },
      'first-sync-only': { type: 'boolean', default: false },
      companies: { type: 'string' },
      'sync-after-ms': { type: 'string' },
      'lock-share': { type: 'string' },
      'timeout-minutes': { type: 'string' },
      'log-level': { type: 'string', default: 'error' },
      liveness: { type: 'boolean', default: false },
      runs: { type: 'string' },
      'redis-fault': { type: 'string' },
      'log-dir': { type: 'string' },
      'kill-pace': { type: 'string' },
    },
  });
  const redisFault = values['redis-fault'] ?? 'failover';
  if (redisFault !== 'failover' && redisFault !== 'restart')
    throw new UsageError('--redis-fault is failover or restart');
  const liveness = values.liveness ?? false;
  const killPace = values['kill-pace'] ?? 'kill';
  if (killPace !== 'kill' && killPace !== 'running') throw new UsageError('--kill-pace is kill or running');
  const settings = (values.crm ?? [...SETTINGS]).map((s) => {
    if (!SETTINGS.includes(s as Setting)) throw new UsageError('--crm is hubspot, salesforce or cluster');
    return s as Setting;
  });
  const lockShare = Number(values['lock-share'] ?? 0);
  if (!(lockShare >= 0 && lockShare < 1)) throw new UsageError('--lock-share must be from 0 to below 1');
  const quick = values.quick ?? false;
  const faultsOnly = (values['faults-only'] ?? false) || liveness;
  const eventsOnly = values['events-only'] ?? false;
  if (faultsOnly && eventsOnly) throw new UsageError('--faults-only and --events-only exclude each other');
  const normal = !faultsOnly && !eventsOnly;
  return {
    settings,
    normal,
    backfillEvents: eventsOnly || (values['events-during-backfill'] ?? normal),
    faults: !eventsOnly && ((values.faults ?? false) || faultsOnly),
    quick,
    alone: values.alone ?? false,
    keyRate: intOption('key-rate', values['key-rate'], OPERATOR_DAY_DEFAULTS.reportsPerSecond, 1, 1_000),
    firstSyncOnly: values['first-sync-only'] ?? false,
    companies: intOption(
      'companies',
      values.companies,
      quick ? 200 : OPERATOR_DAY_DEFAULTS.companies,
      10,
      100_000,
    ),
    syncAfterMs: intOption(
      'sync-after-ms',
      values['sync-after-ms'],
      OPERATOR_DAY_DEFAULTS.syncAfterMs,
      0,
      600_000,
    ),
    lockShare,
    timeoutMs: intOption('timeout-minutes', values['timeout-minutes'], 10, 1, 600) * 60_000,
    logLevel: values['log-level'] ?? 'error',
    liveness,
    runs: intOption('runs', values.runs, 1, 1, 50),
    redisFault,
    logDir: values['log-dir'] ?? null,
    killPace,
  };
}

function progress(line: string): void {
  process.stderr.write(`${line}\n`);
}

async function run(options: Options): Promise<void> {
  const machine = await describeMachine(REDIS_URL);
  const base = {
    companies: options.companies,
    reportsPerSecond: options.keyRate,
    failShare: OPERATOR_DAY_DEFAULTS.failShare,
    reportsPerMinute: OPERATOR_DAY_DEFAULTS.reportsPerMinute,
    extraReports: OPERATOR_DAY_DEFAULTS.extraReports,
    lockRowShare: options.lockShare,
    logLevel: options.logLevel,
  };
  const out: string[] = [`Machine: ${machine}.`, ''];
  if (options.normal) {
    const figures: NormalFigures[] = [];
    for (const setting of options.settings) {
      progress(`operator day, ${setting}: ${options.companies} companies...`);
      const started = Date.now();
      const f = await measureNormal(
        setting,
        { ...base, redisUrl: REDIS_URL, workers: 1, prefix: benchPrefix(`day-${setting}`) },
        options.syncAfterMs,
        options.timeoutMs,
        options.alone,
        options.firstSyncOnly,
      );
      progress(`operator day, ${setting}: done in ${((Date.now() - started) / 1000).toFixed(0)} s`);
      figures.push(f);
    }
    out.push(
      (options.alone
        ? "Normal phase, the install's first sync alone (no reconcile, no `sync`); report"
        : `Normal phase: install (first sync), reconcile due at start-up, \`sync --wait\` ${options.syncAfterMs} ms ` +
          'later; report') +
        ` sandbox ${base.reportsPerSecond} requests a second per key (429 + Retry-After), ` +
        `${base.failShare * 100}% 503, the sandbox's per-minute limit ${base.reportsPerMinute}, no \`REPORTS_RATE_PER_MINUTE\`; local HubSpot at ` +
        `110 per 10 s; ${options.companies} companies; Salesforce row-lock share ${options.lockShare}. One run.`,
      '',
      normalTable(figures),
      '',
    );
  }
  if (options.backfillEvents) {
    const figures: BackfillEventsFigures[] = [];
    for (const setting of options.settings) {
      progress(`operator day with events during the backfill, ${setting}...`);
      figures.push(
        await measureEventsDuringBackfill(
          setting,
          { ...base, redisUrl: REDIS_URL, workers: 1, prefix: benchPrefix(`day-events-${setting}`) },
          options.syncAfterMs,
          options.timeoutMs,
          options.alone,
          progress,
        ),
      );
    }
    out.push(
      "Events during the backfill: the normal phase's day again on a fresh system (same limits, no faults), with " +
        `a real score change and its signed \`score.changed\` every ${BACKFILL_EVENT_EVERY_MS} ms from the install ` +
        "until the first sync's runs end (a phase of its own so that the events' reads and writes stay out of " +
        "the normal phase's counts). Event-to-CRM on the records linked when sent: every record whose " +
        '`report_slug` was the slug when the event was sent holds the new score (events with none are counted ' +
        'apart); strict: every record the seed links to the slug. One run.',
      '',
      backfillEventsTable(figures),
      '',
    );
  }
  if (options.faults && options.liveness) {
    const fault = {
      ...FAULT_DEFAULTS,
      ...LIVENESS_DEFAULTS,
      redisFault: options.redisFault,
      killPace: options.killPace,
      ...(options.quick ? { faultForMs: 40_000 } : {}),
    };
    const figures: FaultFigures[] = [];
    const labels: string[] = [];
    for (const setting of options.settings) {
      for (let n = 1; n <= options.runs; n++) {
        const load = (await import('node:os')).loadavg()[0]!.toFixed(1);
        const label = `${setting} ${n}/${options.runs} (${new Date().toISOString().slice(11, 16)} UTC, load ${load})`;
        progress(`liveness run, ${label}...`);
        const f = await measureFaults(
          setting,
          { ...base, prefix: benchPrefix(`day-live-${setting}`) },
          { ...fault, logDir: options.logDir ? `${options.logDir}/${setting}-${n}` : null },
          options.syncAfterMs,
          progress,
        );
        figures.push(f);
        labels.push(label);
        // Each run's line at once: a series of runs takes a while.
        progress(livenessTable([f], [label]));
      }
    }
    out.push(
      `Liveness fault runs: 2 \`report-connector worker\` processes, one SIGKILLed every ` +
        `${fault.killEveryMs[0] / 1000}-${fault.killEveryMs[1] / 1000} s (${fault.killPace === 'kill' ? 'from kill to kill, the replacement starting meanwhile' : 'after the replacement runs'}) and replaced for ${fault.faultForMs! / 1000} s; ` +
        'midway one Redis SIGKILL + restart (on the cluster setting, with `--redis-fault failover`, a 3-master cluster ' +
        'with a replica each, the master serving the backfill queue SIGKILLed and its replica promoted); report ' +
        `sandbox ${fault.reportsPerSecond}/s with ${fault.failShare * 100}% 503; a signed \`score.changed\` every ` +
        `${fault.eventEveryMs} ms. Bounds: no 30 s without a CRM write while a record has no status; 0 ` +
        'acknowledged events lost; every record with a status and every event sent during the faults on every ' +
        'record the seed links to its slug within 60 s of the faults ending.',
      '',
      livenessTable(figures, labels),
      '',
    );
  } else if (options.faults) {
    const fault = options.quick
      ? { ...FAULT_DEFAULTS, workerKills: 4, afterBackfillMs: 5_000, timeoutMs: 4 * 60_000 }
      : { ...FAULT_DEFAULTS, timeoutMs: Math.max(FAULT_DEFAULTS.timeoutMs, options.timeoutMs) };
    const figures: FaultFigures[] = [];
    for (const setting of options.settings) {
      progress(`operator day under faults, ${setting}...`);
      figures.push(
        await measureFaults(
          setting,
          { ...base, prefix: benchPrefix(`day-faults-${setting}`) },
          fault,
          options.syncAfterMs,
          progress,
        ),
      );
    }
    out.push(
      'Fault phase: a Redis of its own (append-only, fsync always; on the cluster setting a 3-master cluster ' +
        'without replicas, every master killed and restarted together); ' +
        `${fault.workers} \`report-connector worker\` ` +
        `processes, one SIGKILLed every ${fault.killEveryMs[0] / 1000}-${fault.killEveryMs[1] / 1000} s and ` +
        `replaced; Redis SIGKILLed and restarted once; report sandbox ${fault.reportsPerSecond} requests a ` +
        `second with ${fault.failShare * 100}% 503; a real score change and its signed \`score.changed\` every ` +
        `${fault.eventEveryMs} ms (retried until acknowledged), until ${fault.afterBackfillMs / 1000} s after the ` +
        'backfill. Event-to-CRM on the records linked when sent: the event sent to every record whose ' +
        '`report_slug` was its slug then holding the new score (events with none are counted apart); strict: ' +
        'to every record the seed links to the slug holding it, whoever wrote it. One run.',
      '',
      faultTable(figures),
      '',
    );
  }
  process.stdout.write(`${out.join('\n')}\n`);
}

try {
  await run(parseOptions(process.argv.slice(2)));
  process.exit(0);
} catch (err) {
  process.stderr.write(
    `bench:operator-day failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
  );
  process.exit(err instanceof UsageError ? 2 : 1);
}
