import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoCompanies, type SeedCompanyInput } from '../local/demo-seed.js';
import type { LocalSystem } from '../local/system.js';
import { loadFixtureReports } from '../src/sandbox/index.js';
import { startTestSystem, stopTestSystem } from './support/local-system.js';
import { realtimeIdle } from './support/realtime-idle.js';
import { recordLinked, runEnded } from './support/system-state.js';
import { waitFor } from './support/wait.js';

/**
 * Issue 26, point 7: a requested report is linked only where matching would accept it. On the record's own
 * submission's `report.completed` the record links (source `request`) when the names agree as matching reads
 * them, else it goes to review with that report as a candidate; either way its request resolves. Another
 * company's publication leaves a waiting record's request pending. End to end on each local CRM, the sandbox
 * publishing the submissions and delivering the signed events.
 */

const unknown = (name: string, country: string, city: string, industry: string): SeedCompanyInput => ({
  name,
  domain: `${name.toLowerCase().replace(/[^a-z]+/g, '-')}.example`,
  country,
  city,
  industry,
  slug: null,
  expected: { status: 'no_match' },
});

/** Its submission is answered with a report on an unrelated company. */
const ANSWERED_WRONGLY = unknown('Kanazawa Precision Robotics', 'Japan', 'Kanazawa', 'Robotics');
/** Its submission is answered with its own report. */
const ANSWERED = unknown('Brackwater Tidal Instruments', 'Norway', 'Tromsø', 'Marine Technology');
/** Waits while another company with a similar name is published. */
const WAITING = unknown('Fjordlight Sensors', 'Norway', 'Bergen', 'Electronics');
/** That other company. */
const NEIGHBOUR = unknown('Fjordlight Sensor Systems AS', 'Norway', 'Bergen', 'Electronics');

const REALTIME_MS = 20_000;

describe.each(['hubspot', 'salesforce'] as const)('%s', (crm) => {
  let system: LocalSystem;
  const idOf = new Map<string, string>();

  async function request(company: SeedCompanyInput): Promise<string> {
    const made = await system.ctx.reportRequests.request(system.installationId, idOf.get(company.name!)!);
    expect(made.existing).toBe(false);
    return made.submissionId;
  }

  async function requestState(company: SeedCompanyInput) {
    return system.ctx.requests.get(system.installationId, idOf.get(company.name!)!);
  }

  beforeAll(async () => {
    const extra = [ANSWERED_WRONGLY, ANSWERED, WAITING, NEIGHBOUR];
    const companies = [...demoCompanies(loadFixtureReports(), 20), ...extra];
    system = await startTestSystem({ crm, companies });
    await runEnded(system);
    extra.forEach((company, i) => {
      idOf.set(company.name!, system.recordIds[companies.length - extra.length + i]!);
    });
    for (const company of extra) {
      expect(system.crm.record(idOf.get(company.name!)!)?.status, company.name!).toBe('no_match');
    }
  }, 180_000);

  afterAll(async () => {
    await stopTestSystem(system);
  });

  describe('a requested report published', () => {
    it('answered with a report on another company: review with that report as a candidate, the request resolved', async () => {
      const recordId = idOf.get(ANSWERED_WRONGLY.name!)!;
      const submissionId = await request(ANSWERED_WRONGLY);
      expect(system.crm.record(recordId)?.status).toBe('requested');
      const published = system.sandbox.publishSubmission(submissionId, {
        name: 'Northwind Insight Analytics',
        geography: 'Denver, United States',
        industry: 'Analytics',
      });
      const slug = published.report.slug;
      await system.sandbox.waitForDeliveries();
      const ended = await waitFor(
        'the request to resolve',
        async () => {
          const r = await requestState(ANSWERED_WRONGLY);
          return r?.state === 'pending' ? undefined : r;
        },
        REALTIME_MS,
        50,
      );
      expect(ended).toMatchObject({ state: 'review' });
      expect(system.crm.record(recordId)).toMatchObject({ slug: null, status: 'needs_review' });
      const item = await system.ctx.index.reviews.item(system.installationId, recordId);
      expect(item?.candidates.map((c) => c.slug)).toEqual([slug]);
    });

    it('answered with its own report: linked, source request', async () => {
      const recordId = idOf.get(ANSWERED.name!)!;
      const submissionId = await request(ANSWERED);
      const published = system.sandbox.publishSubmission(submissionId);
      await system.sandbox.waitForDeliveries();
      const linked = await recordLinked(system, recordId, 'the record linked', REALTIME_MS);
      expect(linked).toMatchObject({ slug: published.report.slug, linkSource: 'request' });
      await waitFor(
        'the request to resolve',
        async () => ((await requestState(ANSWERED))?.state === 'linked' ? true : undefined),
        REALTIME_MS,
        50,
      );
    });

    it('another company’s publication leaves a waiting request pending', async () => {
      const waitingId = idOf.get(WAITING.name!)!;
      await request(WAITING);
      expect(system.crm.record(waitingId)?.status).toBe('requested');
      const neighbourSubmission = await request(NEIGHBOUR);
      const published = system.sandbox.publishSubmission(neighbourSubmission);
      await system.sandbox.waitForDeliveries();
      await waitFor(
        'the neighbour linked to its own report',
        () => (system.crm.record(idOf.get(NEIGHBOUR.name!)!)?.status === 'matched' ? true : undefined),
        REALTIME_MS,
        50,
      );
      expect(system.crm.record(idOf.get(NEIGHBOUR.name!)!)?.slug).toBe(published.report.slug);
      // The neighbour's report.completed also went to every unlinked record it may concern: all of it done.
      await realtimeIdle(system, { looks: 3, timeoutMs: REALTIME_MS, everyMs: 100 });
      expect(await requestState(WAITING)).toMatchObject({ state: 'pending' });
      expect(system.crm.record(waitingId)).toMatchObject({ slug: null, status: 'requested' });
    });
  });
});
