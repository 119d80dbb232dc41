import { ReplayStore } from '../../connectors/salesforce/changes/replay-store.js';
import type { LocalSystem } from '../../local/system.js';
import { waitFor } from './wait.js';

/** Resolves once the system's Salesforce change stream has stored a position: it runs and has delivered. */
export async function streaming(s: LocalSystem): Promise<void> {
  const replay = new ReplayStore({ redis: s.ctx.redis, keys: s.ctx.keys });
  await waitFor(
    'the change stream to hold a position',
    async () => ((await replay.get(s.installationId)) ? true : undefined),
    20_000,
    50,
  );
}
