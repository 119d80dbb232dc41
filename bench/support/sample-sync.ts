import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { SeedCompanyInput } from '../../local/demo-seed.js';
import { startLocalSystem } from '../../local/system.js';
import {
  type OutsideSample,
  type SampleOutcome,
  type SampleQuality,
  scoreSample,
} from '../../src/matching/evaluate.js';
import { normalizeCompanyName } from '../../src/matching/normalize.js';
import type { MatchDecision } from '../../src/matching/schemas.js';
import { deleteKeysWithPrefix } from '../../src/redis.js';
import { ROUTES } from '../../src/sandbox/sandbox-facts.js';
import { asFixture, type CrmShape, shapeRecord } from './sample-search.js';

/**
 * The outside sample through a full sync: its catalogue loaded into the report sandbox, its records into the
 * local HubSpot or Salesforce, the connector's initial sync run end to end (search, decision, CRM writes),
 * and the outcome read back from the CRM records and the review queue.
 */

export interface SampleSync {
  crm: CrmShape;
  quality: SampleQuality;
  /** Searches the sandbox answered during the sync. */
  searches: number;
  seconds: number;
  runState: string;
}

const RUN_TIMEOUT_MS = 15 * 60_000;

export async function syncSample(
  sample: OutsideSample,
  crm: CrmShape,
  redisUrl?: string,
): Promise<SampleSync> {
  const companies: SeedCompanyInput[] = sample.records.map((record) => {
    const shaped = shapeRecord(record, crm);
    return {
      name: record.name ?? '',
      domain: record.domain,
      country: record.country,
      city: record.city,
      industry: shaped.industry ?? null,
      slug: null,
      // The sample's own labels are scored below; the seed's field is for the demo's own check.
      expected: { status: 'no_match' },
    };
  });
  const started = Date.now();
  const system = await startLocalSystem({
    crm: crm === 'HubSpot' ? 'hubspot' : 'salesforce',
    companies,
    fixtures: sample.reports.map(asFixture),
    prefix: `rc-bench-match-${randomUUID().slice(0, 8)}`,
    workers: 1,
    ...(redisUrl ? { redisUrl } : {}),
  });
  try {
    let state = 'listing';
    while (Date.now() - started < RUN_TIMEOUT_MS) {
      const [run] = await system.ctx.runs.recent(system.installationId, 1);
      state = run?.state ?? state;
      if (state === 'done' || state === 'stopped') break;
      await sleep(250);
    }
    const outcomes: SampleOutcome[] = [];
    for (const [i, record] of sample.records.entries()) {
      const id = system.recordIds[i]!;
      const seen = system.crm.record(id);
      let decision: MatchDecision;
      if (seen?.status === 'matched' && seen.slug) {
        decision = { status: 'matched', slug: seen.slug, reason: 'read back from the CRM' };
      } else if (seen?.status === 'needs_review') {
        const item = await system.ctx.index.reviews.item(system.installationId, id);
        const candidates = (item?.candidates ?? []).map((c) => ({
          slug: c.slug,
          name: c.name,
          industry: c.industry ?? null,
          geography: c.geography ?? null,
          why: c.why ?? 'listed',
        }));
        decision =
          candidates.length > 0
            ? { status: 'needs_review', candidates, reason: 'read back from the review queue' }
            : { status: 'no_match', reason: 'in review without candidates' };
      } else {
        decision = { status: 'no_match', reason: `read back from the CRM: ${seen?.status ?? 'no status'}` };
      }
      // Searches are counted for the whole sync, below; per record they are not told apart.
      outcomes.push({ id: record.id, decision, searches: 0 });
    }
    return {
      crm,
      quality: scoreSample(sample, outcomes, normalizeCompanyName),
      searches: system.sandbox.requestCount({ route: ROUTES.search }),
      seconds: (Date.now() - started) / 1000,
      runState: state,
    };
  } finally {
    await system.close();
    await deleteKeysWithPrefix(system.ctx.config.redisUrl, system.ctx.config.redisPrefix);
  }
}
