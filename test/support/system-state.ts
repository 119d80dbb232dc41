import type { LocalCrmRecord, LocalSystem } from '../../local/system.js';
import { type RedisClient, scanTargets } from '../../src/redis.js';
import type { RunSummary } from '../../src/storage/runs.js';
import { waitFor } from './wait.js';

/** Polls for the end states a reliability test checks: a run that ended, queues with nothing left to do. */

export async function runOf(system: LocalSystem, runId?: string): Promise<RunSummary | undefined> {
  if (runId) return (await system.ctx.runs.get(runId)) ?? undefined;
  const [run] = await system.ctx.runs.recent(system.installationId, 1);
  return run;
}

/** The run (the newest when no id is given) once it is done or stopped. */
export function runEnded(system: LocalSystem, runId?: string, timeoutMs = 120_000): Promise<RunSummary> {
  return waitFor(
    `sync run ${runId ?? '(latest)'} to end`,
    async () => {
      const run = await runOf(system, runId);
      return run && (run.state === 'done' || run.state === 'stopped') ? run : undefined;
    },
    timeoutMs,
    200,
  );
}

/** The newest run once it is another than `previous` (the run a test saw before starting one) and has ended. */
export function nextRunEnded(
  system: LocalSystem,
  previous?: string,
  timeoutMs = 120_000,
): Promise<RunSummary> {
  return waitFor(
    'the sync run to finish',
    async () => {
      const run = await runOf(system);
      return run && run.id !== previous && (run.state === 'done' || run.state === 'stopped')
        ? run
        : undefined;
    },
    timeoutMs,
    100,
  );
}

/** Nothing waiting, active or delayed in any queue, twice in a row (a job may enqueue the next one). */
export async function queuesIdle(system: LocalSystem, timeoutMs = 120_000): Promise<void> {
  let quietChecks = 0;
  await waitFor(
    'every queue to be idle',
    async () => {
      const counts = await system.ctx.queues.counts();
      const busy = Object.values(counts).some((c) => c.waiting + c.active + c.delayed > 0);
      quietChecks = busy ? 0 : quietChecks + 1;
      return quietChecks >= 2 ? true : undefined;
    },
    timeoutMs,
    250,
  );
}

export async function failedJobs(system: LocalSystem): Promise<number> {
  const counts = await system.ctx.queues.counts();
  return Object.values(counts).reduce((n, c) => n + c.failed, 0);
}

/** Every key under `${prefix}:` (BullMQ's and ours), for a final scan or clean-up. */
export async function keysWithPrefix(redis: RedisClient, prefix: string): Promise<string[]> {
  const found: string[] = [];
  // Every master of a cluster: each answers SCAN for its own slots only.
  for (const node of await scanTargets(redis)) {
    let cursor = '0';
    do {
      const [next, keys] = await node.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
      cursor = next;
      found.push(...keys);
    } while (cursor !== '0');
  }
  return found;
}

export { deleteKeysWithPrefix } from '../../src/redis.js';

/** Waits until the local CRM's record holds `score` (an event's or a batch's write landed there). */
export async function scoreOnRecord(
  system: Pick<LocalSystem, 'crm'>,
  recordId: string,
  score: number,
  what: string,
  timeoutMs: number,
  intervalMs = 50,
): Promise<void> {
  await recordWhen(system, recordId, (r) => r.score === score, what, timeoutMs, intervalMs);
}

/** Waits until the local CRM's record passes `test`, and returns it as it was then. */
export function recordWhen(
  system: Pick<LocalSystem, 'crm'>,
  recordId: string,
  test: (record: LocalCrmRecord) => boolean,
  what: string,
  timeoutMs: number,
  intervalMs = 50,
): Promise<LocalCrmRecord> {
  return waitFor(
    what,
    () => {
      const record = system.crm.record(recordId);
      return record && test(record) ? record : undefined;
    },
    timeoutMs,
    intervalMs,
  );
}

/** Waits until the local CRM's record is linked (status matched), and returns it. */
export function recordLinked(
  system: Pick<LocalSystem, 'crm'>,
  recordId: string,
  what: string,
  timeoutMs: number,
  intervalMs = 50,
): Promise<LocalCrmRecord> {
  return recordWhen(system, recordId, (r) => r.status === 'matched', what, timeoutMs, intervalMs);
}
