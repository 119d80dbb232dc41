import type { LocalSystem } from '../../local/system.js';
import { waitFor } from './wait.js';

/** How many looks in a row must find the queue empty, and how long and how often to look. */
export interface IdleWait {
  looks: number;
  timeoutMs: number;
  everyMs: number;
}

/**
 * Waits until nothing is waiting, running or delayed on the system's realtime queue, `looks` times in a row:
 * one empty look can fall between a job finishing and the job it enqueues.
 */
export async function realtimeIdle(system: LocalSystem, wait: IdleWait): Promise<void> {
  let quiet = 0;
  await waitFor(
    'the realtime queue to be idle',
    async () => {
      const { realtime } = await system.ctx.queues.counts();
      quiet = realtime.waiting + realtime.active + realtime.delayed === 0 ? quiet + 1 : 0;
      return quiet >= wait.looks ? true : undefined;
    },
    wait.timeoutMs,
    wait.everyMs,
  );
}
