import type { LocalSystem } from '../../local/system.js';
import { waitFor } from './wait.js';

/**
 * Resolves once the system's change stream is healthy (a worker holds it and it says it streams) and the
 * catch-up poll its start at the tip asked for has run, so that no poll lands in the tests that follow. The
 * workers pick a new installation up at their next read of the installations (ChangeStreams' `refreshMs`), so
 * this may come after the first sync's writes: the stream then holds a position from the first change it
 * delivers.
 */
export async function streaming(s: LocalSystem): Promise<void> {
  await waitFor(
    'the change stream to be healthy',
    async () => ((await s.ctx.stores.streamStates.healthy(s.installationId)) ? true : undefined),
    20_000,
    50,
  );
  await waitFor(
    'the schedule queue to hold nothing but what is scheduled',
    async () => {
      const { schedule } = await s.ctx.queues.counts();
      return schedule.waiting + schedule.active === 0 ? true : undefined;
    },
    20_000,
    50,
  );
}
