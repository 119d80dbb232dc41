import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nameToQuery } from '../src/report-query.js';
import { ReportClient } from '../src/reports/client.js';
import {
  ReportBadRequestError,
  ReportForbiddenError,
  ReportNotFoundError,
  ReportRateLimitedError,
  ReportServerError,
  ReportUnauthorizedError,
} from '../src/reports/errors.js';
import { createSandbox, type ListeningSandbox, type ReportSandbox } from '../src/sandbox/index.js';

/** The client against the sandbox over real HTTP: the two were written apart, so this is where they must meet. */

let sandbox: ReportSandbox;
let listening: ListeningSandbox;

const client = (
  apiKey = 'sk_sandbox_read',
  extra: Partial<ConstructorParameters<typeof ReportClient>[0]> = {},
) => new ReportClient({ baseUrl: listening.url, apiKey, sleep: async () => {}, ...extra });

beforeAll(async () => {
  sandbox = createSandbox();
  listening = await sandbox.listen(0);
});

afterAll(async () => {
  await listening.close();
});

describe('report client against the sandbox', () => {
  it('reads every published fixture report through the published schema', async () => {
    const published = sandbox.listReports().filter((r) => r.published);
    const c = client();
    for (const r of published) {
      const got = await c.getReport(r.slug);
      expect(got.slug).toBe(r.slug);
      expect(got.score.overall).toBe(r.score.overall);
    }
  });

  it('gets 404 for an unpublished report', async () => {
    const hidden = sandbox.listReports().find((r) => !r.published)!;
    await expect(client().getReport(hidden.slug)).rejects.toBeInstanceOf(ReportNotFoundError);
  });

  it('searches by a q made from any name, with filters and limits', async () => {
    const target = sandbox.listReports().find((r) => r.published && r.name.includes('ü'))!;
    const { hits, shape } = await client().search({ q: nameToQuery(target.name).split(' ')[0]!, limit: 50 });
    expect(shape).not.toBe('');
    expect(hits.map((h) => h.slug)).toContain(target.slug);
    const filtered = await client().search({ industry: target.industry, limit: 50 });
    expect(filtered.hits.every((h) => h.industry === target.industry)).toBe(true);
    expect((await client().search({})).hits.length).toBe(20);
  });

  it('searches through GraphQL with variables and reads me { sandbox }', async () => {
    const hits = await client().graphqlSearch({ q: 'Acme', limit: 5 });
    expect(hits.length).toBeGreaterThan(0);
    expect(hits.every((h) => typeof h.slug === 'string')).toBe(true);
    expect(await client().me()).toEqual({ sandbox: true });
  });

  it('maps 401 for the revoked key, 403 for a key without read, 400 for a refused q', async () => {
    await expect(client('sk_sandbox_revoked').getReport('acme-robotics')).rejects.toBeInstanceOf(
      ReportUnauthorizedError,
    );
    await expect(client('sk_not_a_key').me()).rejects.toBeInstanceOf(ReportUnauthorizedError);
    const writeOnly = sandbox.registerKey({ scopes: ['write'] });
    await expect(client(writeOnly.key).me()).rejects.toBeInstanceOf(ReportForbiddenError);
    // The client refuses bad q itself; the raw GraphQL call shows the service's own 400.
    await expect(
      client().graphql('query S($q: String) { search(q: $q) { slug } }', { q: 'bad,comma' }),
    ).rejects.toBeInstanceOf(ReportBadRequestError);
  });

  it('surfaces 429 with the Retry-After the sandbox sends', async () => {
    const limited = sandbox.registerKey({ scopes: ['read'], rateLimitPerMinute: 2 });
    const c = client(limited.key, { maxRetries: 0 });
    await c.me();
    await c.me();
    const err = (await c.me().catch((e: unknown) => e)) as ReportRateLimitedError;
    expect(err).toBeInstanceOf(ReportRateLimitedError);
    expect(err.retryAfterMs).toBeGreaterThan(0);
    expect(err.retryAfterMs).toBeLessThanOrEqual(60_000);
  });

  it('retries injected 503s and gives up with the typed error when they persist', async () => {
    sandbox.setFaults({ failShare: 0.5 });
    try {
      expect((await client().getReport('acme-robotics')).slug).toBe('acme-robotics');
      sandbox.setFaults({ failShare: 1 });
      await expect(
        client('sk_sandbox_read', { maxRetries: 2 }).getReport('acme-robotics'),
      ).rejects.toBeInstanceOf(ReportServerError);
    } finally {
      sandbox.clearFaults();
    }
  });
});
