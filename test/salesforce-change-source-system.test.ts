import { describe, expect, it } from 'vitest';
import type { LocalSystem } from '../local/system.js';
import type { ChangeSourceReason, ChangeSourceView } from '../src/app/change-source.js';
import { adminRequest, installationView } from './support/admin-api.js';
import { streaming } from './support/change-stream.js';
import { runCliOn } from './support/cli-run.js';
import { suiteSystem } from './support/local-system.js';
import { waitFor } from './support/wait.js';

/**
 * Where an installation's changes come from, as the admin page, its JSON API and `status` say it, against the
 * local Salesforce with Change Data Capture: the stream while a worker holds it, and the poll with its reason
 * once the stream is stopped, when the org has no Change Data Capture, and when it is switched off.
 */

interface Shown {
  api: ChangeSourceView;
  /** The page's paragraph about it. */
  page: string;
  /** The `status` line about it. */
  cli: string;
}

/** What the JSON API, the page and `status` show, once the JSON API gives `reason`. */
async function shownAs(
  s: LocalSystem,
  reason: ChangeSourceReason,
  env: NodeJS.ProcessEnv = {},
): Promise<Shown> {
  const api = await waitFor(
    `the installation's changes to come by reason ${reason}`,
    async () => {
      const view = (await installationView(s)).changeSource;
      return view.reason === reason ? view : undefined;
    },
    20_000,
    50,
  );
  const page = await adminRequest(s, `/admin/installations/${s.installationId}`, { bearer: true });
  expect(page.status).toBe(200);
  const { code, stdout } = await runCliOn(s, ['status'], env);
  expect(code).toBe(0);
  return {
    api,
    page: /<p id="change-source"[\s\S]*?<\/p>/.exec(page.text)?.[0] ?? '',
    cli: stdout.split('\n').find((l) => l.startsWith('  changes:')) ?? '',
  };
}

describe('with Change Data Capture on', () => {
  const system = suiteSystem(
    { crm: 'salesforce', companies: 20, env: { SALESFORCE_POLL_SECONDS: '3600' } },
    { firstRunEnded: true, prepare: (s) => streaming(s) },
  );

  it('says stream while a worker holds it, and poll with the reason once no worker does', async () => {
    const streams = system.ctx.changeStreams()!;
    const on = await shownAs(system, 'streaming');
    expect(on.api.mode).toBe('stream');
    expect(on.api.since).not.toBeNull();
    expect(on.page).toContain('data-mode="stream"');
    expect(on.page).toContain('Account changes arrive by Change Data Capture');
    expect(on.cli).toContain('changes: stream (streaming): Account changes arrive by Change Data Capture');

    await streams.stop();
    try {
      const off = await shownAs(system, 'no-holder');
      expect(off.api.mode).toBe('poll');
      expect(off.page).toContain('data-mode="poll"');
      expect(off.page).toContain('No worker holds the Change Data Capture stream');
      expect(off.page).toContain('The worker holding the stream stopped');
      expect(off.cli).toContain('changes: poll (no-holder): No worker holds the Change Data Capture stream');
    } finally {
      streams.start();
    }
    await shownAs(system, 'streaming');
  });

  it('says poll, and why, for an org whose Change Data Capture is not available', async () => {
    const sf = system.salesforce!;
    const streams = system.ctx.changeStreams()!;
    sf.pubsub.enabled = false;
    try {
      // The stream reconnects as after a lost connection, and the org refuses the subscription.
      sf.pubsub.dropStreams();
      const off = await shownAs(system, 'unavailable');
      expect(off.api.mode).toBe('poll');
      expect(off.api.detail).toMatch(/^Change Data Capture is not available in this org/);
      expect(off.page).toContain('data-reason="unavailable"');
      expect(off.page).toContain('Change Data Capture is not available in this org');
      expect(off.cli).toContain(
        'changes: poll (unavailable): Change Data Capture is not available in this org',
      );
    } finally {
      sf.pubsub.enabled = true;
      // The stream tries an unavailable org again after minutes: started again, it subscribes now.
      await streams.stop();
      streams.start();
    }
    await shownAs(system, 'streaming');
  });
});

describe('with Change Data Capture switched off', () => {
  const system = suiteSystem({
    crm: 'salesforce',
    companies: 5,
    env: { SALESFORCE_CHANGE_EVENTS: 'false', SALESFORCE_POLL_SECONDS: '3600' },
  });

  it('says poll, naming the variable that switches it on', async () => {
    expect(system.ctx.changeStreams()).toBeNull();
    const off = await shownAs(system, 'switched-off', { SALESFORCE_CHANGE_EVENTS: 'false' });
    expect(off.api.mode).toBe('poll');
    expect(off.page).toContain(
      'Change Data Capture is switched off (SALESFORCE_CHANGE_EVENTS is not set to true)',
    );
    expect(off.cli).toContain('changes: poll (switched-off): Change Data Capture is switched off');
  });
});
