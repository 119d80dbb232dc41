import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalSystem } from '../local/system.js';
import { connectorFields, staleRecords } from './support/end-state.js';
import { wrongRecords } from './support/expectations.js';
import { startTestSystem, stopTestSystem } from './support/local-system.js';
import { measured } from './support/measured.js';
import { ScoreChanger } from './support/score-changer.js';
import { ScoreVersions } from './support/score-versions.js';
import { reliabilitySeed, seededRandom } from './support/seeded-random.js';
import { failedJobs, queuesIdle, runEnded, runOf } from './support/system-state.js';
import { buildWorkerCli, sharedSecretsEnv, WorkerProcess, workerEnvFor } from './support/worker-process.js';

/**
 * Worker processes (`report-connector worker`, compiled) share a backfill of 1,200 companies while the
 * sandbox changes 8 reports' scores every 300 ms. Once with one worker, once with two, once with two that are
 * SIGKILLed at random points and replaced. Each run must end with every record right, with nothing written
 * from an older report read after a newer one (property history), and the three end states must be equal.
 */

const COMPANIES = 1200;
const CHANGED_SLUGS = 8;
const MAX_VERSIONS = 20;
/**
 * A kill lands at a random moment of the backfill's first seconds or at a random point of its first half,
 * whichever comes first: always inside the backfill however fast it runs, and close enough together that the
 * recoveries (lock expiry) overlap.
 */
const KILL_WINDOW_MS = 3_000;
const seed = reliabilitySeed();

const systems: LocalSystem[] = [];
const processes: WorkerProcess[] = [];
let bin: string;

beforeAll(async () => {
  bin = await buildWorkerCli();
}, 180_000);

afterAll(async () => {
  await Promise.all(processes.map((p) => p.kill()));
  for (const system of systems) await stopTestSystem(system);
});

interface Outcome {
  system: LocalSystem;
  versions: ScoreVersions;
  kills: { atMs: number; recordsDone: number; pid: number }[];
  /** Stale records once the backfill and the change events made during it were processed. */
  staleAfterBackfill: string[];
}

async function backfillWithWorkers(options: { workers: number; kills: number }): Promise<Outcome> {
  const system = await startTestSystem({
    companies: COMPANIES,
    workers: 0,
    env: sharedSecretsEnv(),
  });
  systems.push(system);
  // Slow enough that the backfill lasts several seconds: kills and score changes land in the middle of it.
  system.hubspot.injectFaults({ latencyMs: 150 });
  system.sandbox.setFaults({ delayMs: 15 });
  const slugs = [
    ...new Set(system.seed.flatMap((c) => (c.expected.status === 'matched' ? [c.expected.slug] : []))),
  ].slice(0, CHANGED_SLUGS);
  const versions = new ScoreVersions(system.sandbox, slugs);

  const env = workerEnvFor(system);
  const pool: WorkerProcess[] = [];
  const startOne = async () => {
    const worker = await WorkerProcess.start(bin, env);
    processes.push(worker);
    pool.push(worker);
  };
  for (let i = 0; i < options.workers; i++) await startOne();

  const random = seededRandom(seed + options.kills);
  const ascending = (a: number, b: number) => a - b;
  const killTimes = Array.from(
    { length: options.kills },
    () => 200 + Math.floor(random() * KILL_WINDOW_MS),
  ).sort(ascending);
  const killProgress = Array.from({ length: options.kills }, () =>
    Math.floor((random() * COMPANIES) / 2),
  ).sort(ascending);
  const kills: Outcome['kills'] = [];
  const started = Date.now();
  const deadline = started + 240_000;
  const changes = new ScoreChanger(system, versions, MAX_VERSIONS);
  try {
    for (;;) {
      const run = await runOf(system);
      if (run?.state === 'done' || run?.state === 'stopped') break;
      if (Date.now() > deadline)
        throw new Error(`the backfill did not end in time (seed ${seed}): ${JSON.stringify(run)}`);
      const due =
        killTimes.length > 0 &&
        (Date.now() - started >= killTimes[0]! || (run?.totals.records ?? 0) >= killProgress[0]!);
      if (due) {
        killTimes.shift();
        killProgress.shift();
        const victim = pool.splice(Math.floor(random() * pool.length), 1)[0]!;
        kills.push({ atMs: Date.now() - started, recordsDone: run?.totals.records ?? 0, pid: victim.pid });
        await victim.kill();
        await startOne();
      }
      await sleep(50);
    }
  } finally {
    await changes.stop();
  }
  // First the state the backfill and its change events left, before any later event could repair it.
  await system.sandbox.waitForDeliveries();
  await queuesIdle(system, 180_000);
  const staleAfterBackfill = staleRecords(system);
  versions.finish();
  await system.sandbox.waitForDeliveries();
  await queuesIdle(system, 180_000);
  const run = await runOf(system);
  measured('worker-kill', {
    ...options,
    seed,
    runMs: Date.parse(run?.finishedAt ?? '') - Date.parse(run?.startedAt ?? ''),
    versions: versions.versionCount,
    kills,
    crmCalls: system.hubspot.stats().calls,
  });
  return { system, versions, kills, staleAfterBackfill };
}

function backwardWrites({ system, versions }: Outcome): string[] {
  const changed = new Set(versions.slugs);
  return system.recordIds.flatMap((id) => {
    const slug = system.hubspot.getCompany(id)?.properties.report_slug;
    return slug && changed.has(slug) ? versions.backwardWrites(system.hubspot, id, slug) : [];
  });
}

async function expectRightEndState(outcome: Outcome): Promise<void> {
  const { system } = outcome;
  const context = `seed ${seed}, kills ${JSON.stringify(outcome.kills)}`;
  const run = await runEnded(system);
  expect(run.state, context).toBe('done');
  expect(run.recordsListed, context).toBe(COMPANIES);
  expect(run.totals.failed, context).toBe(0);
  expect(wrongRecords(system), context).toEqual([]);
  expect(outcome.staleAfterBackfill, context).toEqual([]);
  expect(staleRecords(system), context).toEqual([]);
  expect(backwardWrites(outcome), context).toEqual([]);
  expect(await failedJobs(system), context).toBe(0);
  // Every changed slug really moved during the backfill, and its records hold the final version.
  expect(outcome.versions.versionCount, context).toBeGreaterThanOrEqual(3);
}

/** The baseline is the one-worker run; a test run alone (`-t`) has none to compare with. */
function expectSameEndState(outcome: Outcome, baseline: Outcome | undefined): void {
  if (baseline && baseline !== outcome)
    expect(connectorFields(outcome.system)).toEqual(connectorFields(baseline.system));
}

describe('worker processes under SIGKILL, sharing a backfill while scores change', () => {
  const outcomes: Outcome[] = [];

  it('one worker process: every record right, history only moves forward', async () => {
    const outcome = await backfillWithWorkers({ workers: 1, kills: 0 });
    outcomes.push(outcome);
    await expectRightEndState(outcome);
  }, 300_000);

  it('two worker processes sharing the work: the same end state', async () => {
    const outcome = await backfillWithWorkers({ workers: 2, kills: 0 });
    outcomes.push(outcome);
    await expectRightEndState(outcome);
    expectSameEndState(outcome, outcomes[0]);
  }, 300_000);

  it('two worker processes SIGKILLed four times at random points: the same end state', async () => {
    const outcome = await backfillWithWorkers({ workers: 2, kills: 4 });
    outcomes.push(outcome);
    expect(outcome.kills, `seed ${seed}`).toHaveLength(4);
    await expectRightEndState(outcome);
    expectSameEndState(outcome, outcomes[0]);
  }, 400_000);
});
