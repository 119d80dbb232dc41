import { describe, expect, it } from 'vitest';
import type { InstallationView } from '../src/admin/overview.js';
import { perMinute } from '../src/app/rate-words.js';
import { installationView } from './support/admin-api.js';
import { adminLogin } from './support/admin-login.js';
import { runCliOn } from './support/cli-run.js';
import { suiteSystem } from './support/local-system.js';
import { queuesIdle, runEnded } from './support/system-state.js';
import { waitFor } from './support/wait.js';

/**
 * The report key's learnt rate is shown where an operator looks (issue 13): the admin API's installation, its
 * page and `status`. A throttled sandbox answers the first sync with 429s, the key's gate cuts its rate in
 * Redis, and each of the three reads it back from there.
 */

// Two requests a second per key: the first sync's reads meet 429s at once.
// No REPORTS_RATE_PER_MINUTE: the rate is learnt without a ceiling.
const system = suiteSystem(
  { companies: 30, sandboxFaults: { ratePerSecond: 2 }, connectorRatePerMinute: null },
  { timeoutMs: 60_000 },
);

const apiView = (): Promise<InstallationView> => installationView(system);

describe('the learnt report-service rate', () => {
  it('is shown with its ceiling and last cut in the admin API, the admin page and `status`', async () => {
    await waitFor(
      'a 429 to cut the key rate',
      async () => ((await apiView()).reportRate?.lastCut ? true : undefined),
      30_000,
      100,
    );
    // No more 429s, so no more cuts. Once the sync has ended and the queues are idle, no request with the key
    // is in flight: what is stored holds still from here (it moves only as requests are sent).
    system.sandbox.clearFaults();
    await runEnded(system);
    await queuesIdle(system);

    const rate = (await apiView()).reportRate;
    expect(rate).not.toBeNull();
    expect(system.ctx.config.reportsRatePerMinute).toBeUndefined();
    expect(rate).toMatchObject({
      learnt: true,
      ceilingPerMinute: null,
      lastCut: { reason: expect.stringMatching(/429/) },
    });
    // The 2-a-second key: the limit its 429s showed is near 120 a minute, and the rate not far above it.
    expect(rate!.limitPerMinute).toBeGreaterThan(60);
    expect(rate!.limitPerMinute).toBeLessThan(400);
    expect(rate!.keyId).toMatch(/^[0-9a-f]{16}$/);
    expect(Date.parse(rate!.keptUntil!)).toBeGreaterThan(Date.parse(rate!.lastCut!.at));
    const shown = String(Math.round(rate!.perMinute));

    const { cookie } = await adminLogin(system);
    const page = await (
      await fetch(`${system.appUrl}/admin/installations/${system.installationId}`, { headers: { cookie } })
    ).text();
    const paragraph = /<p id="report-rate">[\s\S]*?<\/p>\s*<p class="hint">[\s\S]*?<\/p>/.exec(page)?.[0];
    expect(paragraph).toBeDefined();
    expect(paragraph).toContain(`${Number(shown).toLocaleString('en')} requests a minute`);
    expect(paragraph).toContain('no ceiling (<code>REPORTS_RATE_PER_MINUTE</code> not set)');
    expect(paragraph).toContain(`the key's limit of ${perMinute(rate!.limitPerMinute!)} a minute`);
    expect(paragraph).toMatch(/Last cut \d{4}-\d\d-\d\d \d\d:\d\d UTC: the report service answered 429/);

    const { code, stdout } = await runCliOn(system, ['status']);
    expect(code).toBe(0);
    // The same figures in the same words as the page (issue 31): one formatting for both.
    expect(stdout).toContain(
      `report-service rate: ${perMinute(rate!.perMinute)}/min learnt, ${rate!.phase} (no ceiling, key's limit ${perMinute(rate!.limitPerMinute!)}/min as its last 429 showed); last cut ${rate!.lastCut!.at}`,
    );
    expect(paragraph).toContain(`${perMinute(rate!.perMinute)} requests a minute`);
  }, 90_000);
});
