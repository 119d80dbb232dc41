import { describe, expect, it } from 'vitest';
import type { LocalSystem } from '../local/system.js';
import { parseJobData } from '../src/pipeline/jobs.js';
import { crmKind } from '../src/providers.js';
import { linked, slugTypedByHand, streaming } from './support/change-stream.js';
import { crmCalls, resetCalls } from './support/crm-calls.js';
import { suiteSystem } from './support/local-system.js';
import { realtimeIdle } from './support/realtime-idle.js';
import { waitFor } from './support/wait.js';

/**
 * A quiet org with a healthy change stream costs no CRM call: the scheduled poll (every second here) makes no
 * call while a worker holds the stream and the stream says it streams. A catch-up the stream asks for still
 * calls, a change still arrives by the stream, and the poll calls again once no worker holds the stream or
 * once its last pass is a day old. The calls are the local Salesforce's own count of the REST and SOAP calls
 * it answered (OAuth's aside).
 */

const SALESFORCE = crmKind('salesforce');

/** Poll jobs the system's worker completed, scheduled (no `reason`) and catch-up, since the file started. */
const polls = { scheduled: 0, catchUp: 0 };

async function healthyStream(s: LocalSystem): Promise<void> {
  const schedule = s.workers[0]!.workers.find((w) => w.name === 'schedule')!;
  schedule.on('completed', (job) => {
    if (job.name !== 'poll') return;
    if (parseJobData('poll', job.data).reason === 'catch-up') polls.catchUp++;
    else polls.scheduled++;
  });
  await streaming(s);
  // What the first sync's writes left behind is done before anything is counted.
  await realtimeIdle(s, { looks: 3, timeoutMs: 20_000, everyMs: 100 });
}

const system = suiteSystem(
  { crm: 'salesforce', companies: 20, env: { SALESFORCE_POLL_SECONDS: '1' } },
  { firstRunEnded: true, prepare: (s) => healthyStream(s) },
);

/** Waits until `n` more scheduled polls have completed. */
async function scheduledPolls(n: number): Promise<void> {
  const target = polls.scheduled + n;
  await waitFor(
    `${n} scheduled polls`,
    () => (polls.scheduled >= target ? true : undefined),
    n * 1_000 + 15_000,
    50,
  );
}

describe('a quiet org while its change stream is healthy', () => {
  it('makes no CRM call over five poll intervals', async () => {
    resetCalls(system, SALESFORCE);
    await scheduledPolls(5);
    expect(crmCalls(system, SALESFORCE)).toEqual({});
  });

  it('runs the catch-up poll the stream asks for', async () => {
    const sf = system.salesforce!;
    resetCalls(system, SALESFORCE);
    const asked = polls.catchUp;
    sf.pubsub.publishGap('GAP_OVERFLOW');
    await waitFor('the catch-up poll', () => (polls.catchUp > asked ? true : undefined), 10_000, 20);
    expect(sf.counters().queryAll ?? 0).toBeGreaterThan(0);
  });

  it('still takes a change in by the stream, with no poll pass', async () => {
    const sf = system.salesforce!;
    resetCalls(system, SALESFORCE);
    await linked(system, slugTypedByHand(system));
    await scheduledPolls(2);
    expect(sf.counters().queryAll ?? 0).toBe(0);
  });

  it('polls the CRM once its last pass is a day old, then skips again', async () => {
    const sf = system.salesforce!;
    const { redis, keys } = system.ctx;
    await redis.hset(keys.pollCursor(system.installationId), 'polledAt', String(Date.now() - 25 * 3_600_000));
    resetCalls(system, SALESFORCE);
    // Two: one may have been under way, and skipped, before the cursor aged.
    await scheduledPolls(2);
    const afterPass = sf.counters().queryAll ?? 0;
    expect(afterPass).toBeGreaterThan(0);
    await scheduledPolls(3);
    expect(sf.counters().queryAll ?? 0).toBe(afterPass);
  });

  it('polls the CRM again once no worker holds the stream', async () => {
    const streams = system.ctx.changeStreams()!;
    await streams.stop();
    try {
      resetCalls(system, SALESFORCE);
      await scheduledPolls(3);
      // One poll may have been under way, and skipped, before the stream stopped.
      expect(system.salesforce!.counters().queryAll ?? 0).toBeGreaterThanOrEqual(2);
    } finally {
      streams.start();
    }
  });
});
