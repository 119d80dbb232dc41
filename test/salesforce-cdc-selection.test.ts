import { describe, expect, it } from 'vitest';
import type { LocalSystem } from '../local/system.js';
import { linked, slugTypedByHand, streaming } from './support/change-stream.js';
import { runCliOn } from './support/cli-run.js';
import { suiteSystem } from './support/local-system.js';
import { waitFor } from './support/wait.js';

/**
 * An org installed without Account selected for Change Data Capture (one that never deployed the SFDX project):
 * the install-time setup selects it through the Tooling API when change events are on, once however often it
 * runs; an org that refuses the selection installs all the same, says why, and stays on the poll. The poll runs
 * once an hour here, so a change that reaches a record in seconds came by the stream.
 */

const HOURLY_POLL = { SALESFORCE_POLL_SECONDS: '3600' };
const CREATE_MEMBER = 'tooling.PlatformEventChannelMember';

async function setUpAgain(system: LocalSystem) {
  const installation = (await system.ctx.installations.get(system.installationId))!;
  return system.ctx.runtime.connectorFor(installation).ensureFields();
}

function accountSelections(system: LocalSystem) {
  return system
    .salesforce!.changeEventSelection.list()
    .filter((m) => m.SelectedEntity === 'AccountChangeEvent');
}

/** A person's edit to an Account, and whether the local org published it as a change event. */
function personEdit(system: LocalSystem): { id: string; published: () => boolean } {
  const sf = system.salesforce!;
  const mark = sf.pubsub.latestReplay;
  const id = system.recordIds[0]!;
  sf.updateAccountAsPerson(id, { Website: 'https://edited.example' });
  return { id, published: () => sf.pubsub.headersSince(mark).some((h) => h.recordIds.includes(id)) };
}

describe('an org without Account selected for Change Data Capture', () => {
  const system = suiteSystem(
    { crm: 'salesforce', companies: 20, env: HOURLY_POLL, crmChangeEvents: 'unselected' },
    { firstRunEnded: true, prepare: streaming },
  );

  it('is selected once at install, however often the setup runs, and then streams', async () => {
    const sf = system.salesforce!;
    // The local system ran the setup twice already: before seeding, and at install.
    const again = await setUpAgain(system);
    expect(again.notes ?? []).toEqual([]);
    expect(accountSelections(system).map((m) => [m.DeveloperName, m.EventChannel])).toEqual([
      ['ChangeEvents_AccountChangeEvent', 'ChangeEvents'],
    ]);
    expect(sf.counters()[CREATE_MEMBER]).toBe(1);
    expect((await system.ctx.stores.streamStates.read(system.installationId)).state?.mode).toBe('stream');

    const polls = sf.counters().queryAll ?? 0;
    await linked(system, slugTypedByHand(system), 'the slug to link the Account by the stream');
    expect(sf.counters().queryAll ?? 0).toBe(polls);
  });
});

describe('an org that refuses to select Account (its allocation of selected entities is used up)', () => {
  const system = suiteSystem(
    { crm: 'salesforce', companies: 20, env: HOURLY_POLL, crmChangeEvents: 'refused' },
    {
      firstRunEnded: true,
      prepare: (s) =>
        waitFor(
          'the change stream to fall back to the poll',
          async () =>
            (await s.ctx.stores.streamStates.read(s.installationId)).state?.mode === 'poll'
              ? true
              : undefined,
          20_000,
          50,
        ),
    },
  );

  it('installs and syncs, says why in words, and stays on the poll', async () => {
    const installation = await system.ctx.installations.get(system.installationId);
    expect(installation?.status).toBe('connected');
    expect(system.recordIds.some((id) => system.crm.record(id)?.status === 'matched')).toBe(true);

    const again = await setUpAgain(system);
    expect(again.problems).toEqual([]);
    expect(again.notes).toHaveLength(1);
    expect(again.notes![0]).toMatch(
      /Account could not be selected for Change Data Capture \(.*LIMIT_EXCEEDED/,
    );
    expect(again.notes![0]).toMatch(/arrive by the poll.*Setup > Change Data Capture/);
    expect(accountSelections(system)).toEqual([]);

    expect((await system.ctx.stores.streamStates.read(system.installationId)).state?.detail).toMatch(
      /Change Data Capture is not available in this org/,
    );
    expect(personEdit(system).published()).toBe(false);
  });

  it('doctor warns of the refusal without failing the fields', async () => {
    const { stdout } = await runCliOn(system, ['doctor', '--json']);
    const checks = (JSON.parse(stdout) as { checks: { name: string; ok: boolean; warn?: boolean }[] }).checks;
    expect(checks.find((c) => c.name === `${system.installationId} fields`)?.ok).toBe(true);
    expect(checks.find((c) => c.name === `${system.installationId} set-up`)).toMatchObject({
      ok: true,
      warn: true,
      detail: expect.stringMatching(/could not be selected for Change Data Capture/),
    });
  });
});

describe('change events off', () => {
  const system = suiteSystem(
    {
      crm: 'salesforce',
      companies: 20,
      env: { ...HOURLY_POLL, SALESFORCE_CHANGE_EVENTS: 'false' },
      crmChangeEvents: 'unselected',
    },
    { firstRunEnded: true },
  );

  it('selects nothing for Change Data Capture', async () => {
    const again = await setUpAgain(system);
    expect(again.notes ?? []).toEqual([]);
    expect(accountSelections(system)).toEqual([]);
    expect(system.salesforce!.counters()[CREATE_MEMBER] ?? 0).toBe(0);
    expect(system.salesforce!.counters()['tooling.query'] ?? 0).toBe(0);
  });
});
