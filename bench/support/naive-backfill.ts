import { setTimeout as sleep } from 'node:timers/promises';
import { createHubSpotConnector, staticAccessToken } from '../../connectors/hubspot/create-connector.js';
import { defaultMatching } from '../../src/app/matching.js';
import type { CompanyRecord, CrmConnector } from '../../src/crm/connector.js';
import { CrmRateLimitedError } from '../../src/crm/errors.js';
import { clearedValues, type DesiredValues, valuesForReport } from '../../src/pipeline/mapping.js';
import { RedisRateGate } from '../../src/ratelimit/redis-gate.js';
import { closeRedis, createRedis } from '../../src/redis.js';
import { ReportClient } from '../../src/reports/client.js';
import { ReportNotFoundError, ReportRateLimitedError } from '../../src/reports/errors.js';
import { reportSchema, type SearchHit } from '../../src/reports/schemas.js';
import type { BackfillRunner, ConnectorSideConfig } from './backfill-setup.js';
import { MemorySampler } from './measure.js';

/**
 * The comparison: what a first integration would write. The same CRM connector and report client classes,
 * paced by the same shared gates at the same limits, and the same matcher, but record by record: list a
 * page, then for each record one report call (read its slug, or search its name) and one CRM write of every
 * field, whether or not anything changed.
 */

/** A rate-limited call is waited out and tried again, this many times per record. */
const MAX_WAITS_PER_CALL = 20;

async function waitingOut<T>(call: () => Promise<T>): Promise<T> {
  for (let waits = 0; ; waits++) {
    try {
      return await call();
    } catch (err) {
      const limited = err instanceof ReportRateLimitedError || err instanceof CrmRateLimitedError;
      if (!limited || waits >= MAX_WAITS_PER_CALL) throw err;
      await sleep(Math.max(250, err.retryAfterMs ?? 5_000));
    }
  }
}

async function valuesFor(client: ReportClient, record: CompanyRecord): Promise<DesiredValues> {
  const slug = typeof record.fields.slug === 'string' ? record.fields.slug.trim() : '';
  if (slug) {
    try {
      return valuesForReport(await waitingOut(() => client.getReport(slug)));
    } catch (err) {
      if (err instanceof ReportNotFoundError) return clearedValues('not_published');
      throw err;
    }
  }
  const hits: SearchHit[] = [];
  const { outcome } = await defaultMatching.find(
    record,
    async (q, limit) => {
      const found = (await waitingOut(() => client.search({ q, limit }))).hits;
      hits.push(...found);
      return found.flatMap((hit) =>
        hit.name === undefined
          ? []
          : [
              {
                slug: hit.slug,
                name: hit.name,
                industry: hit.industry,
                geography: hit.geography,
                stage: hit.stage,
              },
            ],
      );
    },
    new Set(),
  );
  if (outcome.status === 'matched') {
    const report = reportSchema.safeParse(hits.find((h) => h.slug === outcome.slug));
    if (report.success) return { slug: outcome.slug, ...valuesForReport(report.data) };
  }
  return clearedValues(outcome.status === 'matched' ? 'error' : outcome.status);
}

async function writeOne(connector: CrmConnector, id: string, values: DesiredValues): Promise<void> {
  const [result] = await waitingOut(() =>
    connector.writeCompanies([{ id, values: { ...values, syncedAt: new Date().toISOString() } }]),
  );
  if (result && !result.ok) throw new Error(`the CRM refused record ${id}: ${result.error.message}`);
}

export async function prepareNaiveBackfill(bench: ConnectorSideConfig): Promise<BackfillRunner> {
  const { services, limits } = bench;
  // Queues commands until connected, like the workers' connections (the gates use it at once).
  const redis = createRedis(bench.redisUrl, 'worker', `${bench.prefix}-naive`);
  const connector = createHubSpotConnector({
    apiUrl: services.hubspotUrl,
    tokens: staticAccessToken(services.privateAppToken),
    gate: new RedisRateGate(redis, `${bench.prefix}:naive:crm-gate`, limits.crmGate),
  });
  const client = new ReportClient({
    baseUrl: services.sandboxUrl,
    apiKey: 'sk_sandbox_read',
    gate: new RedisRateGate(redis, `${bench.prefix}:naive:reports-gate`, {
      max: limits.reportsPerMinute,
      windowMs: 60_000,
    }),
  });
  try {
    await connector.ensureFields();
  } catch (err) {
    await closeRedis(redis);
    throw err;
  }

  return {
    async run() {
      const sampler = new MemorySampler();
      sampler.start();
      const startedAt = Date.now();
      const deadline = startedAt + bench.timeoutMs;
      const notes: string[] = [];
      let records = 0;
      let cursor: string | null = null;
      do {
        const page = await waitingOut(() => connector.listCompanies(cursor));
        for (const record of page.records) {
          await writeOne(connector, record.id, await valuesFor(client, record));
          records += 1;
        }
        cursor = page.nextCursor;
        if (Date.now() > deadline) {
          notes.push(`stopped at the time limit after ${records} records`);
          break;
        }
      } while (cursor !== null);
      const elapsedMs = Date.now() - startedAt;
      return { records, elapsedMs, memory: sampler.stop(), notes };
    },
    close: () => closeRedis(redis),
  };
}
