import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import nock from 'nock';
import { describe, expect, it } from 'vitest';
import type { AdaptiveGate } from '../src/crm/request-gate.js';
import { GRAPHQL_SEARCH_QUERY, parseRetryAfter, ReportClient } from '../src/reports/client.js';
import {
  ReportBadRequestError,
  ReportForbiddenError,
  ReportGraphQLError,
  ReportInvalidRequestError,
  ReportNetworkError,
  ReportNotFoundError,
  ReportRateLimitedError,
  ReportResponseError,
  ReportServerError,
  ReportUnauthorizedError,
  ReportUnexpectedStatusError,
} from '../src/reports/errors.js';
import { requireEveryMock } from './support/strict-nock.js';

const BASE = 'https://reports.test/api';

function report(overrides: Record<string, unknown> = {}) {
  return {
    slug: 'acme-robotics',
    name: 'Acme Robotics',
    industry: 'Robotics',
    stage: 'Series A',
    geography: 'Berlin, Germany',
    score: {
      overall: 72.5,
      band: 'good',
      pillars: [{ name: 'Team', score: 80, weight: 0.4 }],
      strengths: ['x'],
      risks: [{ anything: true }],
      scored_at: '2026-10-01T12:00:00Z',
    },
    verification: { verified_score: 71, verdict: 'confirmed', signed_at: '2026-10-02T08:30:00Z' },
    report_url: 'https://reports.test/r/acme-robotics',
    ...overrides,
  };
}

function client(overrides: Partial<ConstructorParameters<typeof ReportClient>[0]> = {}) {
  const sleeps: number[] = [];
  const c = new ReportClient({
    baseUrl: BASE,
    apiKey: 'sk_test_key',
    sleep: async (ms) => {
      sleeps.push(ms);
    },
    random: () => 0.5,
    ...overrides,
  });
  return { c, sleeps };
}

requireEveryMock();

describe('GET /v1/reports/:slug', () => {
  it('sends the bearer key and returns the parsed report', async () => {
    nock(BASE, { reqheaders: { authorization: 'Bearer sk_test_key' } })
      .get('/v1/reports/acme-robotics')
      .reply(200, report());
    const { c } = client();
    const r = await c.getReport('acme-robotics');
    expect(r.score.overall).toBe(72.5);
    expect(r.verification?.verdict).toBe('confirmed');
  });

  it('puts a valid slug into the path as it is, and refuses one that is not a slug without a request', async () => {
    // Issue 16: a slug such as `a/b c` or `..` used to be encoded and sent; no slug may leave /v1/reports/.
    nock(BASE)
      .get('/v1/reports/r2.d2_x~y-z')
      .reply(200, report({ slug: 'r2.d2_x~y-z' }));
    const { c } = client();
    expect((await c.getReport('r2.d2_x~y-z')).slug).toBe('r2.d2_x~y-z');
    await expect(c.getReport('a/b c')).rejects.toBeInstanceOf(ReportInvalidRequestError);
  });

  it.each([
    ['present', { verification: { verified_score: 1, verdict: 'x', signed_at: '2026-01-01T00:00:00Z' } }],
    ['null', { verification: null }],
    ['absent', { verification: undefined }],
  ])('tolerates verification %s', async (_label, patch) => {
    const body = report(patch);
    if (patch.verification === undefined) delete (body as Record<string, unknown>).verification;
    nock(BASE).get('/v1/reports/acme-robotics').reply(200, body);
    const { c } = client();
    const r = await c.getReport('acme-robotics');
    expect(r.verification ?? null).toEqual(patch.verification ?? null);
  });

  it('accepts any band and verdict string, any score range, and keeps unknown fields', async () => {
    const body = report({
      score: { ...report().score, overall: -12345.678901, band: 'Exceptional+ (beta)' },
      verification: {
        verified_score: 1e6,
        verdict: 'pending-review',
        signed_at: '2026-01-01T00:00:00+02:00',
        by: 'x',
      },
      future_field: { nested: [1, 2] },
    });
    nock(BASE).get('/v1/reports/acme-robotics').reply(200, body);
    const { c } = client();
    const r = await c.getReport('acme-robotics');
    expect(r.score.overall).toBe(-12345.678901);
    expect(r.score.band).toBe('Exceptional+ (beta)');
    expect(r.verification?.verified_score).toBe(1e6);
    expect((r as Record<string, unknown>).future_field).toEqual({ nested: [1, 2] });
    expect((r.verification as Record<string, unknown>).by).toBe('x');
  });

  it('rejects a report whose score is a string, naming the field', async () => {
    nock(BASE)
      .get('/v1/reports/acme-robotics')
      .reply(200, report({ score: { ...report().score, overall: '72.5' } }));
    const { c } = client();
    const err = await c.getReport('acme-robotics').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ReportResponseError);
    expect((err as ReportResponseError).issues.join(' ')).toContain('score.overall');
  });

  it('rejects a 200 that is not JSON', async () => {
    nock(BASE).get('/v1/reports/x').reply(200, '<html>maintenance</html>', { 'content-type': 'text/html' });
    const { c } = client();
    await expect(c.getReport('x')).rejects.toBeInstanceOf(ReportResponseError);
  });

  it('refuses an empty slug without calling the service', async () => {
    const { c } = client();
    await expect(c.getReport('')).rejects.toBeInstanceOf(ReportInvalidRequestError);
  });
});

describe('the error table', () => {
  it.each([
    [400, ReportBadRequestError],
    [401, ReportUnauthorizedError],
    [403, ReportForbiddenError],
    [404, ReportNotFoundError],
  ])('%i is %o and is never retried', async (status, cls) => {
    const scope = nock(BASE)
      .get('/v1/reports/x')
      .once()
      .reply(status, { error: { message: 'nope' } });
    const { c, sleeps } = client();
    const err = await c.getReport('x').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(cls);
    expect((err as ReportBadRequestError).status).toBe(status);
    expect((err as ReportBadRequestError).retryable).toBe(false);
    expect(sleeps).toEqual([]);
    expect(scope.isDone()).toBe(true);
  });

  it('keeps a JSON error body and the request id from the header', async () => {
    nock(BASE)
      .get('/v1/reports/x')
      .reply(401, { error: { code: 'revoked', message: 'key revoked' } }, { 'x-request-id': 'req-123' });
    const { c } = client();
    const err = (await c.getReport('x').catch((e: unknown) => e)) as ReportUnauthorizedError;
    expect(err.requestId).toBe('req-123');
    expect(err.body).toEqual({ error: { code: 'revoked', message: 'key revoked' } });
    expect(err.message).toContain('key revoked');
    expect(err.message).not.toContain('sk_test_key');
  });

  it('takes the request id from the body when no header carries it', async () => {
    nock(BASE).get('/v1/reports/x').reply(403, { request_id: 'body-77', message: 'scope' });
    const { c } = client();
    const err = (await c.getReport('x').catch((e: unknown) => e)) as ReportForbiddenError;
    expect(err.requestId).toBe('body-77');
  });

  it('keeps a text error body as text and never crashes on it', async () => {
    nock(BASE).get('/v1/reports/x').reply(400, 'Bad things {', { 'content-type': 'application/json' });
    const { c } = client();
    const err = (await c.getReport('x').catch((e: unknown) => e)) as ReportBadRequestError;
    expect(err).toBeInstanceOf(ReportBadRequestError);
    expect(err.body).toBe('Bad things {');
  });

  it('retries 5xx with growing backoff and succeeds', async () => {
    nock(BASE)
      .get('/v1/reports/x')
      .reply(503, 'busy')
      .get('/v1/reports/x')
      .reply(500)
      .get('/v1/reports/x')
      .reply(200, report({ slug: 'x' }));
    const { c, sleeps } = client({ baseDelayMs: 100 });
    expect((await c.getReport('x')).slug).toBe('x');
    expect(sleeps).toHaveLength(2);
    expect(sleeps[1]!).toBeGreaterThan(sleeps[0]!);
  });

  it('gives up on 5xx after the bounded number of retries', async () => {
    const scope = nock(BASE).get('/v1/reports/x').times(3).reply(502, { message: 'gateway' });
    const { c, sleeps } = client({ maxRetries: 2 });
    const err = (await c.getReport('x').catch((e: unknown) => e)) as ReportServerError;
    expect(err).toBeInstanceOf(ReportServerError);
    expect(err.status).toBe(502);
    expect(sleeps).toHaveLength(2);
    expect(scope.isDone()).toBe(true);
  });

  it('retries a network error', async () => {
    nock(BASE)
      .get('/v1/reports/x')
      .replyWithError('socket hang up')
      .get('/v1/reports/x')
      .reply(200, report({ slug: 'x' }));
    const { c } = client();
    expect((await c.getReport('x')).slug).toBe('x');
  });

  it('times a slow answer out and reports it as a network error', async () => {
    // A real socket: nock's delayed replies do not survive an aborted fetch cleanly.
    nock.enableNetConnect('127.0.0.1');
    const server = createServer(() => {});
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as AddressInfo;
    try {
      const { c } = client({ baseUrl: `http://127.0.0.1:${port}/api`, timeoutMs: 50, maxRetries: 1 });
      const err = (await c.getReport('x').catch((e: unknown) => e)) as ReportNetworkError;
      expect(err).toBeInstanceOf(ReportNetworkError);
      expect(err.timedOut).toBe(true);
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
      nock.disableNetConnect();
    }
  });

  it('honours Retry-After on 429 and pauses the shared gate', async () => {
    const paused: number[] = [];
    nock(BASE)
      .get('/v1/reports/x')
      .reply(429, { message: 'slow down' }, { 'retry-after': '2' })
      .get('/v1/reports/x')
      .reply(200, report({ slug: 'x' }));
    const { c, sleeps } = client({
      gate: { acquire: async () => {}, pause: async (ms) => void paused.push(ms) },
    });
    expect((await c.getReport('x')).slug).toBe('x');
    expect(sleeps).toEqual([2000]);
    expect(paused).toEqual([2000]);
  });

  it('throws a 429 whose Retry-After is longer than it may wait, with the delay', async () => {
    nock(BASE).get('/v1/reports/x').reply(429, '', { 'retry-after': '120' });
    const { c, sleeps } = client({ maxRetryAfterMs: 30_000 });
    const err = (await c.getReport('x').catch((e: unknown) => e)) as ReportRateLimitedError;
    expect(err).toBeInstanceOf(ReportRateLimitedError);
    expect(err.retryAfterMs).toBe(120_000);
    expect(sleeps).toEqual([]);
  });

  it('backs off on 429 without Retry-After and ends with the typed error', async () => {
    nock(BASE).get('/v1/reports/x').times(2).reply(429);
    const { c, sleeps } = client({ maxRetries: 1 });
    const err = (await c.getReport('x').catch((e: unknown) => e)) as ReportRateLimitedError;
    expect(err).toBeInstanceOf(ReportRateLimitedError);
    expect(err.retryAfterMs).toBeUndefined();
    expect(sleeps).toHaveLength(1);
  });

  it('tells an adaptive gate of a 429 (admission time, Retry-After, stated quota) and of quota headers', async () => {
    const calls: unknown[][] = [];
    const gate: AdaptiveGate = {
      acquire: async () => {},
      pause: async (ms) => void calls.push(['pause', ms]),
      admit: async () => 1_000 + calls.length,
      refused: async (...args) => void calls.push(['refused', ...args]),
      quota: async (q) => void calls.push(['quota', q]),
    };
    nock(BASE)
      .get('/v1/reports/x')
      .reply(
        429,
        { message: 'slow down' },
        {
          'retry-after': '2',
          'ratelimit-limit': '25',
          'ratelimit-remaining': '0',
          'ratelimit-reset': '2',
          'ratelimit-policy': '25;w=1',
        },
      )
      .get('/v1/reports/x')
      .reply(200, report({ slug: 'x' }), {
        'x-ratelimit-limit': '25',
        'x-ratelimit-remaining': '24',
        'x-ratelimit-reset': '1',
      });
    const { c, sleeps } = client({ gate });
    expect((await c.getReport('x')).slug).toBe('x');
    expect(sleeps).toEqual([2000]);
    expect(calls).toEqual([
      ['refused', 1_000, 2_000, { limit: 25, remaining: 0, resetMs: 2_000, windowMs: 1_000 }],
      ['quota', { limit: 25, remaining: 24, resetMs: 1_000 }],
    ]);
  });

  it('pauses the gate for a Retry-After longer than it may wait before throwing it', async () => {
    const paused: number[] = [];
    nock(BASE).get('/v1/reports/x').reply(429, '', { 'retry-after': '120' });
    const { c, sleeps } = client({
      maxRetryAfterMs: 30_000,
      gate: { acquire: async () => {}, pause: async (ms) => void paused.push(ms) },
    });
    await expect(c.getReport('x')).rejects.toBeInstanceOf(ReportRateLimitedError);
    expect(paused).toEqual([120_000]);
    expect(sleeps).toEqual([]);
  });

  it('reports an unlisted status as unexpected, without retrying', async () => {
    nock(BASE).get('/v1/reports/x').reply(302, '', { location: 'https://elsewhere.test' });
    const { c } = client();
    await expect(c.getReport('x')).rejects.toBeInstanceOf(ReportUnexpectedStatusError);
  });
});

describe('parseRetryAfter', () => {
  it('reads seconds and HTTP dates', () => {
    expect(parseRetryAfter('3')).toBe(3000);
    expect(parseRetryAfter('0.5')).toBe(500);
    expect(parseRetryAfter(new Date(10_000).toUTCString(), 4_000)).toBe(6_000);
    expect(parseRetryAfter('soon')).toBeUndefined();
    expect(parseRetryAfter(null)).toBeUndefined();
  });
});

describe('GET /v1/search', () => {
  it('sends every parameter', async () => {
    nock(BASE)
      .get('/v1/search')
      .query({ q: 'acme robotics', industry: 'Robotics', stage: 'Seed', min_score: '50.5', limit: '50' })
      .reply(200, { results: [report()] });
    const { c } = client();
    const r = await c.search({
      q: 'acme robotics',
      industry: 'Robotics',
      stage: 'Seed',
      min_score: 50.5,
      limit: 50,
    });
    expect(r.hits.map((h) => h.slug)).toEqual(['acme-robotics']);
  });

  it.each([
    ['a bare array', [report()], 'array'],
    ['results', { results: [report()] }, 'results'],
    ['items', { items: [report()], total: 1 }, 'items'],
    ['data', { data: [report()] }, 'data'],
    ['nested data.items', { data: { items: [report()] } }, 'data.items'],
    ['edges of nodes', { edges: [{ node: report() }] }, 'edges'],
  ])('accepts %s', async (_label, body, shape) => {
    nock(BASE).get('/v1/search').query(true).reply(200, body);
    const { c } = client();
    const r = await c.search({ q: 'acme' });
    expect(r.shape).toBe(shape);
    expect(r.hits[0]?.slug).toBe('acme-robotics');
  });

  it('accepts summary items that hold only slug and a numeric score', async () => {
    nock(BASE)
      .get('/v1/search')
      .query(true)
      .reply(200, { results: [{ slug: 's1', score: 55 }] });
    const { c } = client();
    const r = await c.search({});
    expect(r.hits).toEqual([{ slug: 's1', score: 55 }]);
  });

  it('skips items without a slug and says why', async () => {
    nock(BASE)
      .get('/v1/search')
      .query(true)
      .reply(200, { results: [{ name: 'no slug' }, report()] });
    const { c } = client();
    const r = await c.search({});
    expect(r.hits).toHaveLength(1);
    expect(r.skipped[0]).toContain('slug');
  });

  it('fails clearly on an unrecognised body', async () => {
    nock(BASE).get('/v1/search').query(true).reply(200, { total: 3, page: 1 });
    const { c } = client();
    const err = (await c.search({}).catch((e: unknown) => e)) as ReportResponseError;
    expect(err).toBeInstanceOf(ReportResponseError);
    expect(err.message).toContain('total, page');
  });

  it.each([
    ['a comma', 'Acme, Inc'],
    ['121 characters', 'a'.repeat(121)],
    ['an ampersand', 'A & B'],
  ])('refuses q with %s before sending', async (_label, q) => {
    const { c } = client();
    await expect(c.search({ q })).rejects.toBeInstanceOf(ReportInvalidRequestError);
  });

  it.each([0, 51, 2.5])('refuses limit %s before sending', async (limit) => {
    const { c } = client();
    await expect(c.search({ limit })).rejects.toBeInstanceOf(ReportInvalidRequestError);
  });

  it('passes a 400 from the service through as the typed error', async () => {
    nock(BASE).get('/v1/search').query(true).reply(400, { error: 'q invalid' });
    const { c } = client();
    await expect(c.search({ q: 'fine' })).rejects.toBeInstanceOf(ReportBadRequestError);
  });
});

describe('POST /v1/graphql', () => {
  it('sends search arguments as variables, never in the query text', async () => {
    let sent: { query: string; variables: Record<string, unknown> } | undefined;
    nock(BASE)
      .post('/v1/graphql', (body) => {
        sent = body;
        return true;
      })
      .reply(200, { data: { search: [{ slug: 'acme-robotics', score: { overall: 72.5, band: 'good' } }] } });
    const { c } = client();
    const hits = await c.graphqlSearch({ q: 'acme robotics', industry: 'Robotics', limit: 5 });
    expect(hits[0]?.slug).toBe('acme-robotics');
    expect(sent?.variables).toEqual({ q: 'acme robotics', industry: 'Robotics', limit: 5 });
    expect(sent?.query).toBe(GRAPHQL_SEARCH_QUERY);
    expect(sent?.query).not.toContain('acme');
  });

  it('reads me { sandbox }', async () => {
    nock(BASE)
      .post('/v1/graphql')
      .reply(200, { data: { me: { sandbox: true } } });
    const { c } = client();
    expect(await c.me()).toEqual({ sandbox: true });
  });

  it('turns an errors array into a typed error', async () => {
    nock(BASE)
      .post('/v1/graphql')
      .reply(200, { errors: [{ message: 'Cannot query field "x"' }], data: null });
    const { c } = client();
    const err = (await c.me().catch((e: unknown) => e)) as ReportGraphQLError;
    expect(err).toBeInstanceOf(ReportGraphQLError);
    expect(err.messages).toEqual(['Cannot query field "x"']);
  });

  it('maps a GraphQL 400 (bad q) to the bad-request error', async () => {
    nock(BASE)
      .post('/v1/graphql')
      .reply(400, { errors: [{ message: 'q invalid' }] });
    const { c } = client();
    await expect(c.graphqlSearch({ q: 'ok' })).rejects.toBeInstanceOf(ReportBadRequestError);
  });

  it('maps 401 and 403 the same way as REST', async () => {
    nock(BASE).post('/v1/graphql').reply(401).post('/v1/graphql').reply(403);
    const { c } = client();
    await expect(c.me()).rejects.toBeInstanceOf(ReportUnauthorizedError);
    await expect(c.me()).rejects.toBeInstanceOf(ReportForbiddenError);
  });
});
