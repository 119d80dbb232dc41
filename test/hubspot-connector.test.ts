import nock from 'nock';
import { describe, expect, it, vi } from 'vitest';
import { createHubSpotConnector } from '../connectors/hubspot/create-connector.js';
import { HUBSPOT_FIELDS } from '../connectors/hubspot/fields/field-names.js';
import { HUBSPOT_DEFAULT_API_VERSION, hubspotPaths } from '../connectors/hubspot/provider.js';
import type { AccessTokenSource } from '../src/auth/token-manager.js';
import {
  CrmFieldsMissingError,
  CrmForbiddenError,
  CrmRateLimitedError,
  CrmTransientError,
  CrmUnauthorizedError,
} from '../src/crm/errors.js';
import type { RequestGate } from '../src/crm/request-gate.js';
import { requireEveryMock } from './support/strict-nock.js';

/** The date-versioned paths the connector calls by default. */
const P = hubspotPaths(HUBSPOT_DEFAULT_API_VERSION);

const API = 'https://api.hubspot.test';
const OWN = HUBSPOT_FIELDS.map((f) => f.hubspot);
const READ_PROPERTIES = ['name', 'domain', 'industry', 'country', 'city', ...OWN].join(',');
const NOON = Date.UTC(2026, 10, 21, 12, 0, 0);

const list = () => nock(API).get(P.companies).query(true);

/** `lanes`: a gate with a deferrable lane (holdDeferrable), as the Redis gate; its holds land in `held`. */
function setup(options: { timeZone?: string; lanes?: boolean } = {}) {
  const { lanes, ...connectorOptions } = options;
  const sleeps: number[] = [];
  const pauses: number[] = [];
  const held: number[] = [];
  let acquires = 0;
  let now = NOON;
  const gate: RequestGate = {
    acquire: async () => {
      acquires++;
    },
    pause: async (ms) => {
      pauses.push(ms);
    },
    ...(lanes
      ? {
          holdDeferrable: async (ms: number) => {
            held.push(ms);
          },
        }
      : {}),
  };
  const refreshAfterRejection = vi.fn(async (_rejected: string) => 'token-2');
  const tokens: AccessTokenSource = { current: async () => 'token-1', refreshAfterRejection };
  const connector = createHubSpotConnector({
    apiUrl: API,
    tokens,
    gate,
    sleep: async (ms) => {
      sleeps.push(ms);
      now += ms;
    },
    random: () => 0.5,
    now: () => now,
    ...connectorOptions,
  });
  return { connector, sleeps, pauses, held, refreshAfterRejection, acquires: () => acquires };
}

const company = (id: string, properties: Record<string, string | null>) => ({
  id,
  properties: { hs_object_id: id, ...properties },
  createdAt: '2026-01-01T00:00:00Z',
  updatedAt: '2026-01-01T00:00:00Z',
  archived: false,
});

requireEveryMock('mocked HubSpot');

describe('reads', () => {
  it('lists a page with the matching and own properties and converts values', async () => {
    const { connector } = setup();
    nock(API, { reqheaders: { authorization: 'Bearer token-1' } })
      .get(P.companies)
      .query({ limit: '100', properties: READ_PROPERTIES, archived: 'false' })
      .reply(200, {
        results: [
          company('101', {
            name: 'Acme',
            domain: 'acme.test',
            industry: '',
            country: null,
            report_slug: 'acme',
            report_score: '81.5',
            report_scored_at: '2026-03-01T10:00:00Z',
            report_verified_at: '1767225600000',
            report_verified_score: '',
            report_match_status: 'matched',
          }),
        ],
        paging: { next: { after: '102', link: 'x' } },
      });
    const page = await connector.listCompanies(null);
    expect(page.nextCursor).toBe('102');
    expect(page.records).toHaveLength(1);
    const [r] = page.records;
    expect(r).toMatchObject({
      id: '101',
      name: 'Acme',
      domain: 'acme.test',
      industry: null,
      country: null,
      city: null,
    });
    expect(r!.fields).toMatchObject({
      slug: 'acme',
      score: 81.5,
      scoredAt: '2026-03-01T10:00:00.000Z',
      verifiedAt: '2026-01-01T00:00:00.000Z',
      verifiedScore: null,
      matchStatus: 'matched',
      band: null,
    });
    expect(Object.keys(r!.fields).sort()).toEqual(HUBSPOT_FIELDS.map((f) => f.key).sort());
  });

  it('passes the cursor as `after` and ends when there is no next page', async () => {
    const { connector } = setup();
    nock(API)
      .get(P.companies)
      .query({ limit: '100', properties: READ_PROPERTIES, archived: 'false', after: '102' })
      .reply(200, { results: [] });
    expect(await connector.listCompanies('102')).toEqual({ records: [], nextCursor: null });
  });

  it('reads in batches of 100 and leaves out ids that no longer exist', async () => {
    const { connector } = setup();
    const ids = Array.from({ length: 150 }, (_, i) => String(1000 + i));
    const batches: string[][] = [];
    nock(API)
      .post(P.companiesBatchRead, (body) => {
        batches.push(body.inputs.map((i: { id: string }) => i.id));
        return body.properties.join(',') === READ_PROPERTIES;
      })
      .query({ archived: 'false' })
      .times(2)
      .reply(async (req: Request) => {
        const asked = ((await req.json()) as { inputs: { id: string }[] }).inputs.map((i) => i.id);
        const missing = asked.filter((id) => id === '1003');
        const results = asked.filter((id) => id !== '1003').map((id) => company(id, { name: `c${id}` }));
        // 1004 was merged into 9999: HubSpot answers with the survivor, which was not asked for.
        const shown = results.map((r) => (r.id === '1004' ? company('9999', { name: 'survivor' }) : r));
        return missing.length
          ? [
              207,
              {
                status: 'COMPLETE',
                results: shown,
                numErrors: 1,
                errors: [{ category: 'OBJECT_NOT_FOUND', context: { ids: missing } }],
              },
            ]
          : [200, { status: 'COMPLETE', results: shown }];
      });
    const records = await connector.readCompanies([...ids, '1000']);
    expect(batches.map((b) => b.length)).toEqual([100, 50]);
    expect(records.map((r) => r.id)).toEqual(ids.filter((id) => id !== '1003' && id !== '1004'));
  });
});

describe('writes', () => {
  it('sends values in wire format and maps a 207 back to each record', async () => {
    const { connector } = setup();
    let sent: { id: string; properties: Record<string, string> }[] = [];
    nock(API)
      .post(P.companiesBatchUpdate, (body) => {
        sent = body.inputs;
        return true;
      })
      .reply(207, {
        status: 'COMPLETE',
        results: [
          company('1', { report_score: '81.5' }),
          company('50', { report_score: '1', hs_merged_object_ids: '7;3' }),
        ],
        numErrors: 1,
        errors: [
          {
            status: 'error',
            category: 'OBJECT_NOT_FOUND',
            message: 'Could not get some COMPANY objects, they may be deleted or not exist.',
            context: { ids: ['2'] },
          },
        ],
      });
    const results = await connector.writeCompanies([
      {
        id: '1',
        values: {
          score: 81.5,
          scoredAt: '2026-03-01T10:00:00.000Z',
          verifiedScore: null,
          matchStatus: 'matched',
          pillars: 'Team 80 (40%)',
        },
      },
      { id: '2', values: { score: 1 } },
      { id: '3', values: { score: 1 } },
      { id: '4', values: { scoredAt: 'not a date' } },
    ]);
    expect(sent).toEqual([
      {
        id: '1',
        properties: {
          report_score: '81.5',
          report_scored_at: String(Date.parse('2026-03-01T10:00:00.000Z')),
          report_verified_score: '',
          report_match_status: 'matched',
          report_pillars: 'Team 80 (40%)',
        },
      },
      { id: '2', properties: { report_score: '1' } },
      { id: '3', properties: { report_score: '1' } },
    ]);
    expect(results).toEqual([
      { id: '1', ok: true },
      {
        id: '2',
        ok: false,
        error: expect.objectContaining({ code: 'NOT_FOUND', providerCode: 'OBJECT_NOT_FOUND' }),
      },
      { id: '3', ok: false, error: expect.objectContaining({ code: 'NOT_FOUND', mergedInto: '50' }) },
      { id: '4', ok: false, error: expect.objectContaining({ code: 'INVALID_VALUE' }) },
    ]);
  });

  it('sends an id named twice once, later values winning, and answers both updates', async () => {
    const { connector } = setup();
    let sent: unknown;
    nock(API)
      .post(P.companiesBatchUpdate, (body) => {
        sent = body.inputs;
        return true;
      })
      .reply(200, { status: 'COMPLETE', results: [company('1', {})] });
    const results = await connector.writeCompanies([
      { id: '1', values: { score: 1, band: 'weak' } },
      { id: '1', values: { score: 2 } },
    ]);
    expect(sent).toEqual([{ id: '1', properties: { report_score: '2', report_band: 'weak' } }]);
    expect(results).toEqual([
      { id: '1', ok: true },
      { id: '1', ok: true },
    ]);
  });

  it('marks ids named by a whole-batch 404 as NOT_FOUND and sends the rest again', async () => {
    const { connector } = setup();
    const bodies: string[][] = [];
    nock(API)
      .post(P.companiesBatchUpdate, (body) => {
        bodies.push(body.inputs.map((i: { id: string }) => i.id));
        return true;
      })
      .reply(404, { status: 'error', category: 'OBJECT_NOT_FOUND', message: 'gone', context: { ids: ['2'] } })
      .post(P.companiesBatchUpdate, (body) => {
        bodies.push(body.inputs.map((i: { id: string }) => i.id));
        return true;
      })
      .reply(200, { status: 'COMPLETE', results: [company('1', {}), company('3', {})] });
    const results = await connector.writeCompanies(
      ['1', '2', '3'].map((id) => ({ id, values: { score: 5 } })),
    );
    expect(bodies).toEqual([
      ['1', '2', '3'],
      ['1', '3'],
    ]);
    expect(results.map((r) => (r.ok ? 'ok' : r.error.code))).toEqual(['ok', 'NOT_FOUND', 'ok']);
  });

  it('narrows a whole-batch validation refusal (2026-09 portal rules) down to the record it is about', async () => {
    const { connector } = setup();
    const bodies: string[][] = [];
    const required = [
      { isValid: false, message: 'industry is required', error: 'REQUIRED', name: 'industry' },
    ];
    nock(API)
      .post(P.companiesBatchUpdate, (body) => {
        bodies.push(body.inputs.map((i: { id: string }) => i.id));
        return true;
      })
      .times(5)
      .reply(async (req: Request) => {
        const { inputs } = (await req.json()) as { inputs: { id: string }[] };
        if (inputs.some((i) => i.id === '3')) {
          return [
            400,
            {
              status: 'error',
              category: 'VALIDATION_ERROR',
              message: `Property values were not valid: ${JSON.stringify(required)}`,
            },
          ];
        }
        return [200, { status: 'COMPLETE', results: inputs.map((i) => company(i.id, {})) }];
      });
    const results = await connector.writeCompanies(
      ['1', '2', '3', '4'].map((id) => ({ id, values: { score: 5 } })),
    );
    expect(results.map((r) => (r.ok ? 'ok' : r.error.code))).toEqual(['ok', 'ok', 'INVALID_VALUE', 'ok']);
    expect(results[2]!.ok === false && results[2]!.error.message).toMatch(/industry is required/);
    // Halving: the whole batch, then each half, then the half that held the refused record.
    expect(bodies).toEqual([['1', '2', '3', '4'], ['1', '2'], ['3', '4'], ['3'], ['4']]);
  });

  it('throws CrmFieldsMissingError when HubSpot lacks one of the properties', async () => {
    const { connector } = setup();
    const detail = [
      {
        isValid: false,
        message: 'Property "report_band" does not exist',
        error: 'PROPERTY_DOESNT_EXIST',
        name: 'report_band',
      },
    ];
    nock(API)
      .post(P.companiesBatchUpdate)
      .reply(400, {
        status: 'error',
        category: 'VALIDATION_ERROR',
        message: `Property values were not valid: ${JSON.stringify(detail)}`,
      });
    const err = await connector
      .writeCompanies([{ id: '1', values: { band: 'strong' } }])
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CrmFieldsMissingError);
    expect((err as CrmFieldsMissingError).fields).toEqual(['report_band']);
  });

  it('splits more than 100 updates into batches of 100 and sends nothing for empty updates', async () => {
    const { connector } = setup();
    const sizes: number[] = [];
    nock(API)
      .post(P.companiesBatchUpdate, (body) => {
        sizes.push(body.inputs.length);
        return true;
      })
      .times(2)
      .reply(async (req: Request) => {
        const { inputs } = (await req.json()) as { inputs: { id: string }[] };
        return [200, { status: 'COMPLETE', results: inputs.map((i) => company(i.id, {})) }];
      });
    const updates = Array.from({ length: 150 }, (_, i) => ({ id: String(i), values: { score: i } }));
    const results = await connector.writeCompanies([...updates, { id: 'x', values: {} }]);
    expect(sizes).toEqual([100, 50]);
    expect(results.every((r) => r.ok)).toBe(true);
    expect(results.at(-1)).toEqual({ id: 'x', ok: true });
  });
});

describe('limits and failures', () => {
  it('waits out a TEN_SECONDLY_ROLLING 429 (pausing the gate) and retries', async () => {
    const { connector, pauses, sleeps } = setup();
    list().reply(
      429,
      {
        status: 'error',
        message: 'You have reached your ten_secondly_rolling limit.',
        errorType: 'RATE_LIMIT',
        policyName: 'TEN_SECONDLY_ROLLING',
      },
      {
        'X-HubSpot-RateLimit-Interval-Milliseconds': '10000',
        'X-HubSpot-RateLimit-Max': '110',
        'X-HubSpot-RateLimit-Remaining': '0',
      },
    );
    list().reply(
      200,
      { results: [] },
      { 'X-HubSpot-RateLimit-Max': '110', 'X-HubSpot-RateLimit-Remaining': '100' },
    );
    await expect(connector.listCompanies(null)).resolves.toEqual({ records: [], nextCursor: null });
    expect(pauses).toEqual([10_000]);
    expect(sleeps).toEqual([10_000]);
  });

  it('gives up with CrmRateLimitedError after a bounded number of 429s', async () => {
    const { connector, pauses } = setup();
    list()
      .times(4)
      .reply(429, { status: 'error', policyName: 'TEN_SECONDLY_ROLLING', errorType: 'RATE_LIMIT' });
    const err = await connector.listCompanies(null).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CrmRateLimitedError);
    expect(err).toMatchObject({ policy: 'TEN_SECONDLY_ROLLING', retryAfterMs: 10_000 });
    expect(pauses).toHaveLength(3);
  });

  it('turns a DAILY 429 into CrmRateLimitedError with the time until the daily reset', async () => {
    const { connector, pauses } = setup();
    list().reply(429, {
      status: 'error',
      message: 'You have reached your daily limit.',
      errorType: 'RATE_LIMIT',
      policyName: 'DAILY',
    });
    const err = await connector.listCompanies(null).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CrmRateLimitedError);
    expect(err).toMatchObject({ policy: 'DAILY', retryAfterMs: 12 * 3600_000, code: 'CRM_RATE_LIMITED' });
    expect(pauses).toEqual([]);
  });

  it.each([
    ['America/New_York', 17],
    ['Asia/Tokyo', 3],
  ])('waits for midnight in the portal time zone (%s) after a DAILY 429', async (timeZone, hours) => {
    const { connector } = setup({ timeZone });
    list().reply(429, { status: 'error', message: 'daily', errorType: 'RATE_LIMIT', policyName: 'DAILY' });
    const err = await connector.listCompanies(null).catch((e: unknown) => e);
    expect(err).toMatchObject({ policy: 'DAILY', retryAfterMs: hours * 3600_000 });
  });

  it('never calls a numbered API path', async () => {
    const { connector } = setup();
    // No interceptor: a request that reached the network would fail differently.
    const http = (connector as unknown as { http: { request(r: unknown): Promise<unknown> } }).http;
    await expect(http.request({ method: 'GET', path: '/crm/v3/objects/companies' })).rejects.toThrow(
      /numbered API path/,
    );
  });

  it('retries 5xx with growing, jittered delays, then succeeds', async () => {
    const { connector, sleeps } = setup();
    list().reply(503, { status: 'error', message: 'unavailable' });
    list().reply(502, 'Bad gateway');
    list().reply(500, { status: 'error', message: 'internal' });
    list().reply(200, { results: [] });
    await connector.listCompanies(null);
    // random() = 0.5: half the step fixed plus a quarter: 375, 750, 1500 for steps 500, 1000, 2000.
    expect(sleeps).toEqual([375, 750, 1500]);
  });

  it('gives up on 5xx with CrmTransientError after the bounded retries', async () => {
    const { connector, sleeps } = setup();
    list().times(5).reply(503, { status: 'error', message: 'unavailable' });
    const err = await connector.listCompanies(null).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CrmTransientError);
    expect((err as CrmTransientError).status).toBe(503);
    expect(sleeps).toHaveLength(4);
  });

  it('retries network errors', async () => {
    const { connector, sleeps } = setup();
    list().replyWithError('socket hang up');
    list().reply(200, { results: [] });
    await expect(connector.listCompanies(null)).resolves.toEqual({ records: [], nextCursor: null });
    expect(sleeps).toHaveLength(1);
  });

  it('refreshes the token once on 401 and retries with the new token', async () => {
    const { connector, refreshAfterRejection } = setup();
    nock(API, { reqheaders: { authorization: 'Bearer token-1' } })
      .get(P.companies)
      .query(true)
      .reply(401, { status: 'error', category: 'EXPIRED_AUTHENTICATION', message: 'expired' });
    nock(API, { reqheaders: { authorization: 'Bearer token-2' } })
      .get(P.companies)
      .query(true)
      .reply(200, { results: [] });
    await connector.listCompanies(null);
    expect(refreshAfterRejection).toHaveBeenCalledTimes(1);
    expect(refreshAfterRejection).toHaveBeenCalledWith('token-1');
  });

  it('throws CrmUnauthorizedError when the refreshed token is refused too', async () => {
    const { connector, refreshAfterRejection } = setup();
    list().times(2).reply(401, { status: 'error', category: 'INVALID_AUTHENTICATION', message: 'no' });
    await expect(connector.listCompanies(null)).rejects.toBeInstanceOf(CrmUnauthorizedError);
    expect(refreshAfterRejection).toHaveBeenCalledTimes(1);
  });

  it('throws CrmForbiddenError naming the missing scope', async () => {
    const { connector } = setup();
    list().reply(403, {
      status: 'error',
      category: 'MISSING_SCOPES',
      message: "This app hasn't been granted all required scopes to make this call.",
      errors: [
        {
          message: 'One or more of the following scopes are required.',
          context: { requiredGranularScopes: ['crm.objects.companies.read'] },
        },
      ],
    });
    const err = await connector.listCompanies(null).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CrmForbiddenError);
    expect((err as Error).message).toContain('crm.objects.companies.read');
  });

  it('holds off for the rest of the window when Remaining runs low, and reports usage', async () => {
    const { connector, pauses, sleeps } = setup();
    list().reply(
      200,
      { results: [] },
      {
        'X-HubSpot-RateLimit-Max': '110',
        'X-HubSpot-RateLimit-Remaining': '3',
        'X-HubSpot-RateLimit-Interval-Milliseconds': '10000',
      },
    );
    list().reply(
      200,
      { results: [] },
      { 'X-HubSpot-RateLimit-Max': '110', 'X-HubSpot-RateLimit-Remaining': '109' },
    );
    expect(connector.apiUsage()).toBeNull();
    await connector.listCompanies(null);
    expect(pauses).toEqual([10_000]);
    expect(connector.apiUsage()).toMatchObject({ used: 107, limit: 110 });
    expect(connector.apiUsage()?.summary).toContain('3 of 110');
    await connector.listCompanies(null);
    expect(sleeps).toEqual([10_000]);
    expect(pauses).toEqual([10_000]);
  });
});

describe('a nearly spent window with a gate that has lanes', () => {
  const limits = (remaining: number) => ({
    'X-HubSpot-RateLimit-Max': '110',
    'X-HubSpot-RateLimit-Remaining': String(remaining),
    'X-HubSpot-RateLimit-Interval-Milliseconds': '10000',
  });

  it('holds only deferrable callers, until the window frees the slots below the low water', async () => {
    // Issue 30: the whole portal held for 10 s whenever a backfill ran the window low, score changes too.
    const { connector, held, pauses, sleeps } = setup({ lanes: true });
    list().reply(200, { results: [] }, limits(3));
    list().reply(200, { results: [] }, limits(6));
    await connector.listCompanies(null);
    await connector.listCompanies(null);
    // Low water is 6 of 110 (5%): 4 slots, then 1, at the window's average pace of 110 per 10 s.
    expect(held.map(Math.round)).toEqual([Math.round((10_000 * 4) / 110), Math.round(10_000 / 110)]);
    expect(pauses).toEqual([]);
    expect(sleeps).toEqual([]);
  });

  it('a spent window still holds everyone for the rest of it', async () => {
    const { connector, held, pauses } = setup({ lanes: true });
    list().reply(200, { results: [] }, limits(0));
    await connector.listCompanies(null);
    expect(pauses).toEqual([10_000]);
    expect(held).toEqual([]);
  });
});

describe('findBySlug', () => {
  it('searches report_slug EQ slug, follows pages and paces searches apart', async () => {
    const { connector, sleeps } = setup();
    const bodies: Record<string, unknown>[] = [];
    nock(API)
      .post(P.companiesSearch, (body) => {
        bodies.push(body);
        return true;
      })
      .reply(200, {
        total: 201,
        results: [company('1', { report_slug: 'acme' })],
        paging: { next: { after: '200' } },
      })
      .post(P.companiesSearch, (body) => {
        bodies.push(body);
        return true;
      })
      .reply(200, { total: 201, results: [company('2', { report_slug: 'acme' })] });
    const records = await connector.findBySlug('acme');
    expect(records.map((r) => r.id)).toEqual(['1', '2']);
    expect(bodies[0]).toMatchObject({
      filterGroups: [{ filters: [{ propertyName: 'report_slug', operator: 'EQ', value: 'acme' }] }],
      sorts: ['hs_object_id'],
      limit: 200,
    });
    expect(bodies[0]).not.toHaveProperty('after');
    expect(bodies[1]).toMatchObject({ after: '200' });
    // 5 searches per second: the second waits 200 ms after the first.
    expect(sleeps).toEqual([200]);
  });
});

describe('findByName (issue 31)', () => {
  it('searches name CONTAINS_TOKEN *word* per word, one bounded page, punctuation and * dropped', async () => {
    const { connector } = setup();
    const bodies: Record<string, unknown>[] = [];
    nock(API)
      .post(P.companiesSearch, (body) => {
        bodies.push(body);
        return true;
      })
      .reply(200, {
        total: 2,
        results: [company('7', { name: 'Acme Widgets' }), company('8', { name: 'Acme Widgetry' })],
      });
    const records = await connector.findByName?.('acme* widg"et', 100);
    expect(records?.map((r) => [r.id, r.name])).toEqual([
      ['7', 'Acme Widgets'],
      ['8', 'Acme Widgetry'],
    ]);
    expect(bodies).toHaveLength(1);
    expect(bodies[0]).toMatchObject({
      filterGroups: [
        {
          filters: [
            { propertyName: 'name', operator: 'CONTAINS_TOKEN', value: '*acme*' },
            { propertyName: 'name', operator: 'CONTAINS_TOKEN', value: '*widg*' },
            { propertyName: 'name', operator: 'CONTAINS_TOKEN', value: '*et*' },
          ],
        },
      ],
      sorts: ['hs_object_id'],
      limit: 100,
    });
    expect(bodies[0]).not.toHaveProperty('after');
  });

  it('asks nothing for a query with no word in it', async () => {
    const { connector } = setup();
    expect(await connector.findByName?.(' *** ', 100)).toEqual([]);
  });
});
