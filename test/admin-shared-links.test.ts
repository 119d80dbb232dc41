import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalSystem } from '../local/system.js';
import type { InstallationView } from '../src/admin/overview.js';
import { installationView } from './support/admin-api.js';
import { autoLinkedState } from './support/link-states.js';
import { startTestSystem, stopTestSystem } from './support/local-system.js';
import { runEnded } from './support/system-state.js';

/**
 * The link index keeps only digests of an auto-linked record's domain and country (issue 15): enough to tell
 * that records on one report disagree. The admin API shows such a report with the records' values read from the
 * CRM, and without them, saying why, when the CRM cannot be read.
 */

let system: LocalSystem;

beforeAll(async () => {
  system = await startTestSystem({ companies: 20, logLevel: 'silent' });
  await runEnded(system);
}, 120_000);

afterAll(async () => {
  await stopTestSystem(system);
});

const view = (): Promise<InstallationView> => installationView(system);

describe('reports auto-linked to records that disagree', () => {
  it('lists them with the domain and country the CRM has, or without them when the CRM cannot be read', async () => {
    const [a, b] = system.recordIds;
    if (!a || !b) throw new Error('the local HubSpot has fewer than two records');
    const slug = 'shared-links-test-report';
    await system.hubspot.setCompanyProperty(a, 'domain', 'quessly.com');
    await system.hubspot.setCompanyProperty(a, 'country', 'Germany');
    await system.hubspot.setCompanyProperty(b, 'domain', 'quessly.fr');
    await system.hubspot.setCompanyProperty(b, 'country', 'France');
    await system.ctx.index.apply(system.installationId, [
      autoLinkedState(a, slug, 'quessly.com', 'Germany'),
      autoLinkedState(b, slug, 'quessly.fr', 'France'),
    ]);

    const shown = await view();
    expect(shown.sharedLinkPlacesProblem).toBeNull();
    const conflict = shown.sharedLinkConflicts.find((c) => c.slug === slug);
    expect(conflict).toBeDefined();
    expect(conflict!.differs).toEqual(['domain', 'country']);
    expect(conflict!.records).toEqual(
      [
        { recordId: a, domain: 'quessly.com', country: 'Germany' },
        { recordId: b, domain: 'quessly.fr', country: 'France' },
      ].sort((x, y) => x.recordId.localeCompare(y.recordId)),
    );

    // The CRM refuses every call: the conflict is still listed, its values left out with the reason.
    system.hubspot.injectFaults({ dailyLimitExceeded: true });
    try {
      const down = await view();
      expect(down.sharedLinkPlacesProblem).toMatch(/CRM could not be read/);
      const still = down.sharedLinkConflicts.find((c) => c.slug === slug);
      expect(still?.records.map((r) => [r.domain, r.country])).toEqual([
        [null, null],
        [null, null],
      ]);
    } finally {
      system.hubspot.clearFaults();
    }
  }, 60_000);
});
