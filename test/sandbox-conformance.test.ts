import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createSandbox, type ListeningSandbox, type ReportSandbox } from '../src/sandbox/index.js';

/**
 * The sandbox against the Published Report Lookup Service interface, over real HTTP: one test per rule of
 * the interface and of the CONTRACT's sandbox section. Expectations come from the interface and from the
 * fixture file read directly, never from the sandbox's own code.
 */

interface FixtureOnDisk {
  slug: string;
  name: string;
  industry: string;
  stage: string;
  geography: string;
  published: boolean;
  score: { overall: number; band: string; pillars: { name: string; score: number; weight: number }[] };
  verification?: { verified_score: number; verdict: string; signed_at: string } | null;
}

const FIXTURES: FixtureOnDisk[] = JSON.parse(
  readFileSync(join(import.meta.dirname, '..', 'fixtures', 'reports.json'), 'utf8'),
).reports;
const PUBLISHED = FIXTURES.filter((r) => r.published);
const UNPUBLISHED = FIXTURES.filter((r) => !r.published);

const READ = 'sk_sandbox_read';
const WRITE = 'sk_sandbox_write';
const LEGACY = 'sk_sandbox_legacy';
const REVOKED = 'sk_sandbox_revoked';

interface Answer {
  status: number;
  headers: Headers;
  body: unknown;
}

// biome-ignore lint/suspicious/noExplicitAny: test bodies are inspected field by field
type Loose = any;

async function call(
  baseUrl: string,
  path: string,
  options: { key?: string | null; method?: string; json?: unknown; body?: string; contentType?: string } = {},
): Promise<Answer> {
  const headers: Record<string, string> = {};
  const key = options.key === undefined ? READ : options.key;
  if (key !== null) headers.authorization = `Bearer ${key}`;
  let body: string | undefined = options.body;
  if (options.json !== undefined) {
    body = JSON.stringify(options.json);
    headers['content-type'] = 'application/json';
  }
  if (options.contentType) headers['content-type'] = options.contentType;
  const response = await fetch(`${baseUrl}${path}`, { method: options.method ?? 'GET', headers, body });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    // Not JSON: the raw text is what the assertion sees.
  }
  return { status: response.status, headers: response.headers, body: parsed };
}

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}

/** A local webhook receiver: records what arrives and lets a test await the next delivery. */
class Receiver {
  readonly received: Received[] = [];
  private waiters: ((r: Received) => void)[] = [];
  readonly server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const entry = { headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
      this.received.push(entry);
      res.writeHead(204).end();
      const waiter = this.waiters.shift();
      waiter?.(entry);
    });
  });

  async start(): Promise<string> {
    this.server.listen(0, '127.0.0.1');
    await once(this.server, 'listening');
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hook`;
  }

  next(): Promise<Received> {
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    this.server.close();
    await once(this.server, 'close');
  }
}

const SECRET = `whsec_${randomBytes(24).toString('base64')}`;
const receiver = new Receiver();
let sandbox: ReportSandbox;
let api: ListeningSandbox;
let base: string;

beforeAll(async () => {
  const hookUrl = await receiver.start();
  sandbox = createSandbox({ webhookUrl: hookUrl, webhookSecret: SECRET, webhookRetryDelaysMs: [20, 40] });
  api = await sandbox.listen(0);
  base = api.url;
});

afterAll(async () => {
  await api.close();
  await receiver.stop();
});

afterEach(() => {
  sandbox.clearFaults();
  sandbox.resetRateLimits();
});

const get = (path: string, key?: string | null) => call(base, path, { key });
const graphql = (query: string, variables?: Record<string, unknown>, key?: string | null) =>
  call(base, '/v1/graphql', { method: 'POST', json: { query, variables }, key });

const verifiedWith = PUBLISHED.find((r) => r.verification && typeof r.verification === 'object')!;
const withoutVerification = PUBLISHED.find((r) => !('verification' in r))!;
const withNullVerification = PUBLISHED.find((r) => r.verification === null)!;

describe('base url and framing', () => {
  it('serves under http://127.0.0.1:PORT/api', () => {
    expect(base).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/api$/);
    expect(api.port).toBeGreaterThan(0);
  });

  it('sends an x-request-id on every answer, errors included', async () => {
    const answers = await Promise.all([
      get(`/v1/reports/${verifiedWith.slug}`),
      get(`/v1/reports/${verifiedWith.slug}`, null),
      get('/v1/reports/no-such-report'),
      get('/v1/no-such-route'),
    ]);
    expect(answers.map((a) => a.status)).toEqual([200, 401, 404, 404]);
    const ids = answers.map((a) => a.headers.get('x-request-id'));
    for (const id of ids) expect(id).toMatch(/\S{8,}/);
    expect(new Set(ids).size).toBe(ids.length);
  });
});

describe('GET /v1/reports/:slug', () => {
  it('returns a published report with every Report field and without the internal flag', async () => {
    const answer = await get(`/v1/reports/${verifiedWith.slug}`);
    expect(answer.status).toBe(200);
    const body: Loose = answer.body;
    expect(body.slug).toBe(verifiedWith.slug);
    expect(body.name).toBe(verifiedWith.name);
    expect(body.industry).toBe(verifiedWith.industry);
    expect(body.stage).toBe(verifiedWith.stage);
    expect(body.geography).toBe(verifiedWith.geography);
    expect(body.score.overall).toBe(verifiedWith.score.overall);
    expect(body.score.band).toBe(verifiedWith.score.band);
    expect(body.score.pillars).toEqual(verifiedWith.score.pillars);
    expect(Array.isArray(body.score.strengths)).toBe(true);
    expect(Array.isArray(body.score.risks)).toBe(true);
    expect(new Date(body.score.scored_at).toISOString()).toBeTruthy();
    expect(body.verification).toEqual(verifiedWith.verification);
    expect(() => new URL(body.report_url)).not.toThrow();
    expect(body).not.toHaveProperty('published');
  });

  it('keeps verification absent when the fixture has none, and null when it is null', async () => {
    const absent: Loose = (await get(`/v1/reports/${withoutVerification.slug}`)).body;
    expect(absent).not.toHaveProperty('verification');
    const nulled: Loose = (await get(`/v1/reports/${withNullVerification.slug}`)).body;
    expect(nulled).toHaveProperty('verification', null);
  });

  it('answers 404 for an unpublished slug and for an unknown slug', async () => {
    expect((await get(`/v1/reports/${UNPUBLISHED[0]!.slug}`)).status).toBe(404);
    expect((await get('/v1/reports/never-existed-anywhere')).status).toBe(404);
  });
});

describe('GET /v1/search', () => {
  it('rejects q with characters other than letters, numbers, spaces and hyphens', async () => {
    for (const q of ['acme!', 'a_b', 'a.b', "o'brien", '<script>', 'a&b', 'semi;colon', 'tab\there']) {
      const answer = await get(`/v1/search?q=${encodeURIComponent(q)}`);
      expect(answer.status, q).toBe(400);
    }
  });

  it('rejects a q of 121 characters and accepts one of 120', async () => {
    expect((await get(`/v1/search?q=${'a'.repeat(121)}`)).status).toBe(400);
    expect((await get(`/v1/search?q=${'a'.repeat(120)}`)).status).toBe(200);
    expect((await get(`/v1/search?q=${encodeURIComponent(`${'ab-c '.repeat(24)}`)}`)).status).toBe(200);
  });

  it('accepts Unicode letters and digits in q', async () => {
    for (const q of [
      'Müller',
      'Société Lumière',
      'Северен',
      '株式会社さくらロボティクス',
      '24 7 Care',
      'Ñandú',
    ]) {
      const answer = await get(`/v1/search?q=${encodeURIComponent(q)}`);
      expect(answer.status, q).toBe(200);
      expect((answer.body as Loose).results.length, q).toBeGreaterThan(0);
    }
  });

  it('matches every query word as a word prefix, case- and accent-insensitively', async () => {
    const muller: Loose = (await get('/v1/search?q=muller')).body;
    expect(muller.results.map((r: Loose) => r.name)).toContain('Müller Präzisionstechnik GmbH');
    const societe: Loose = (await get('/v1/search?q=SOCIETE%20lumi')).body;
    expect(societe.results.map((r: Loose) => r.name)).toContain('Société Lumière SAS');
    const acme: Loose = (await get('/v1/search?q=acme%20rob&limit=50')).body;
    const expected = PUBLISHED.filter((r) => /^acme robotics/i.test(r.name)).map((r) => r.slug);
    expect(acme.results.map((r: Loose) => r.slug).sort()).toEqual(expected.sort());
    // "cme" is inside "Acme" but starts no word.
    const inner: Loose = (await get('/v1/search?q=cme%20robotics')).body;
    expect(inner.results).toEqual([]);
  });

  it('searches description and industry as well as the name', async () => {
    const byIndustry: Loose = (await get('/v1/search?q=cybersecurity&limit=50')).body;
    const cyber = PUBLISHED.filter((r) => r.industry === 'Cybersecurity');
    for (const slug of cyber.map((r) => r.slug))
      expect(byIndustry.results.map((r: Loose) => r.slug)).toContain(slug);
    const byDescription: Loose = (await get('/v1/search?q=controllers%20factories&limit=50')).body;
    expect(byDescription.results.length).toBeGreaterThan(0);
    for (const r of byDescription.results) expect(r.name.toLowerCase()).not.toContain('controllers');
  });

  it('never returns unpublished reports', async () => {
    const answer: Loose = (await get('/v1/search?q=acme&limit=50')).body;
    const unpublishedSlugs = new Set(UNPUBLISHED.map((r) => r.slug));
    expect(answer.results.some((r: Loose) => unpublishedSlugs.has(r.slug))).toBe(false);
    for (const r of answer.results) expect(r).not.toHaveProperty('published');
  });

  it('returns 20 results by default and at most 50', async () => {
    expect(PUBLISHED.length).toBeGreaterThan(50);
    expect((await get('/v1/search')).body).toMatchObject({ results: expect.any(Array) });
    expect(((await get('/v1/search')).body as Loose).results).toHaveLength(20);
    expect(((await get('/v1/search?limit=50')).body as Loose).results).toHaveLength(50);
    expect(((await get('/v1/search?limit=1')).body as Loose).results).toHaveLength(1);
  });

  it('rejects a limit that is not an integer from 1 to 50', async () => {
    for (const limit of ['51', '0', '-1', '2.5', 'ten', '']) {
      expect((await get(`/v1/search?limit=${limit}`)).status, limit).toBe(400);
    }
  });

  it('keeps reports whose score is at least min_score', async () => {
    const answer: Loose = (await get('/v1/search?min_score=75.5&limit=50')).body;
    const expected = PUBLISHED.filter((r) => r.score.overall >= 75.5).map((r) => r.slug);
    expect(expected.length).toBeGreaterThan(0);
    expect(expected.length).toBeLessThanOrEqual(50);
    expect(answer.results.map((r: Loose) => r.slug).sort()).toEqual(expected.sort());
    expect((await get('/v1/search?min_score=abc')).status).toBe(400);
  });

  it('filters industry and stage by exact match', async () => {
    const industry: Loose = (
      await get(`/v1/search?industry=${encodeURIComponent('Food & Beverage')}&limit=50`)
    ).body;
    const expectedFood = PUBLISHED.filter((r) => r.industry === 'Food & Beverage').map((r) => r.slug);
    expect(industry.results.map((r: Loose) => r.slug).sort()).toEqual(expectedFood.sort());
    expect(((await get('/v1/search?industry=food%20%26%20beverage')).body as Loose).results).toEqual([]);
    expect(((await get('/v1/search?industry=Food')).body as Loose).results).toEqual([]);

    const stage: Loose = (await get('/v1/search?stage=Series%20A&limit=50')).body;
    const expectedStage = PUBLISHED.filter((r) => r.stage === 'Series A');
    expect(stage.results.length).toBe(Math.min(50, expectedStage.length));
    for (const r of stage.results) expect(r.stage).toBe('Series A');
    expect(((await get('/v1/search?stage=series%20a')).body as Loose).results).toEqual([]);
  });

  it('tells same-named organisations apart by the filters', async () => {
    const answer: Loose = (await get('/v1/search?q=Acme%20Robotics&industry=Healthcare')).body;
    expect(answer.results.map((r: Loose) => r.geography)).toEqual(['Austin, United States']);
  });
});

describe('POST /v1/graphql', () => {
  it('reports me { sandbox } as true for a sandbox key', async () => {
    const answer = await graphql('{ me { sandbox } }');
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ data: { me: { sandbox: true } } });
  });

  it('searches with variables and returns report objects', async () => {
    const answer = await graphql(
      `query Find($q: String, $industry: String, $limit: Int) {
        search(q: $q, industry: $industry, limit: $limit) {
          slug name industry stage geography report_url
          score { overall band pillars { name score weight } scored_at }
          verification { verified_score verdict signed_at }
        }
      }`,
      { q: 'acme robotics', industry: 'Industrial Automation', limit: 5 },
    );
    expect(answer.status).toBe(200);
    const results: Loose[] = (answer.body as Loose).data.search;
    const expected = PUBLISHED.filter(
      (r) => /acme robotics/i.test(r.name) && r.industry === 'Industrial Automation',
    );
    expect(results.map((r) => r.slug).sort()).toEqual(expected.map((r) => r.slug).sort());
    const first = results[0];
    const fixture = FIXTURES.find((r) => r.slug === first.slug)!;
    expect(first.score.overall).toBe(fixture.score.overall);
    expect(first.score.pillars).toEqual(fixture.score.pillars);
  });

  it('applies the default limit of 20 and refuses more than 50', async () => {
    const all: Loose = (await graphql('{ search { slug } }')).body;
    expect(all.data.search).toHaveLength(20);
    const tooMany = await graphql('query($n: Int) { search(limit: $n) { slug } }', { n: 51 });
    expect(tooMany.status).toBe(400);
  });

  it('answers the q rule with a GraphQL error and HTTP 400', async () => {
    for (const q of ['acme!', 'a'.repeat(121)]) {
      const answer = await graphql('query($q: String) { search(q: $q) { slug } }', { q });
      expect(answer.status, q).toBe(400);
      expect((answer.body as Loose).errors.length).toBeGreaterThan(0);
    }
    const inline = await graphql('{ search(q: "semi;colon") { slug } }');
    expect(inline.status).toBe(400);
    const ok = await graphql('query($q: String) { search(q: $q) { slug } }', { q: 'a'.repeat(120) });
    expect(ok.status).toBe(200);
  });

  it('answers 400 to a query that does not parse or names unknown fields', async () => {
    expect((await graphql('{ search { slug ')).status).toBe(400);
    expect((await graphql('{ nothingLikeThis }')).status).toBe(400);
    expect(
      (await call(base, '/v1/graphql', { method: 'POST', body: 'query', contentType: 'text/plain' })).status,
    ).toBe(400);
  });
});

describe('POST /v1/submissions and /v1/submissions/:id/documents', () => {
  it('creates a submission and attaches a document with the write scope', async () => {
    const created = await call(base, '/v1/submissions', {
      method: 'POST',
      key: WRITE,
      json: { name: 'Test Org' },
    });
    expect(created.status).toBe(201);
    const id = (created.body as Loose).id;
    expect(typeof id).toBe('string');
    const document = await call(base, `/v1/submissions/${id}/documents`, {
      method: 'POST',
      key: WRITE,
      json: { filename: 'deck.pdf' },
    });
    expect(document.status).toBe(201);
    expect(typeof (document.body as Loose).id).toBe('string');
  });

  it('answers 404 for a document on an unknown submission', async () => {
    const answer = await call(base, '/v1/submissions/sub_unknown/documents', {
      method: 'POST',
      key: WRITE,
      json: {},
    });
    expect(answer.status).toBe(404);
  });

  it('answers 400 to a body that is not JSON', async () => {
    const plain = await call(base, '/v1/submissions', {
      method: 'POST',
      key: WRITE,
      body: 'name=x',
      contentType: 'text/plain',
    });
    expect(plain.status).toBe(400);
    const broken = await call(base, '/v1/submissions', {
      method: 'POST',
      key: WRITE,
      body: '{"name": ',
      contentType: 'application/json',
    });
    expect(broken.status).toBe(400);
  });
});

describe('write endpoints: what the sandbox takes as a submission and a document', () => {
  async function submission(): Promise<string> {
    const created = await call(base, '/v1/submissions', {
      method: 'POST',
      key: WRITE,
      json: { name: 'Upload Test Org', domain: 'upload-test.example', reference: 'crm-1' },
    });
    expect(created.status).toBe(201);
    return (created.body as Loose).id;
  }

  function upload(id: string, form: FormData, key: string = WRITE): Promise<Response> {
    return fetch(`${base}/v1/submissions/${id}/documents`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}` },
      body: form,
    });
  }

  it('answers 400 to a submission without a name, or with a name that is not text', async () => {
    for (const json of [{}, { name: '' }, { name: '   ' }, { name: 42 }, { domain: 'x.example' }, ['a']]) {
      const answer = await call(base, '/v1/submissions', { method: 'POST', key: WRITE, json });
      expect(answer.status, JSON.stringify(json)).toBe(400);
    }
    expect(sandbox.listSubmissions().some((s) => s.content.name.trim() === '')).toBe(false);
  });

  it('keeps every field of a submission, unknown ones included', async () => {
    const created = await call(base, '/v1/submissions', {
      method: 'POST',
      key: WRITE,
      json: { name: 'Kept Fields Org', country: 'Germany', city: 'Kiel', custom: { a: 1 } },
    });
    expect(created.status).toBe(201);
    const stored = sandbox.getSubmission((created.body as Loose).id);
    expect(stored?.content).toEqual({
      name: 'Kept Fields Org',
      country: 'Germany',
      city: 'Kiel',
      custom: { a: 1 },
    });
    expect(stored?.status).toBe('received');
  });

  it('takes a multipart file upload and records its name, type, size and digest', async () => {
    const id = await submission();
    const bytes = new TextEncoder().encode('%PDF-1.4 a small deck');
    const form = new FormData();
    form.append('file', new Blob([bytes], { type: 'application/pdf' }), 'deck.pdf');
    const answer = await upload(id, form);
    expect(answer.status).toBe(201);
    const body: Loose = await answer.json();
    expect(body.submission_id).toBe(id);
    const stored = sandbox.getSubmission(id)!.documents;
    expect(stored).toHaveLength(1);
    expect(stored[0]).toMatchObject({
      id: body.id,
      content: { filename: 'deck.pdf', content_type: 'application/pdf', size: bytes.byteLength },
    });
    expect(stored[0]!.content.sha256).toMatch(/^[0-9a-f]{64}$/);
  });

  it('answers 400 to a multipart body without a file part or with an empty file', async () => {
    const id = await submission();
    const noFile = new FormData();
    noFile.append('note', 'just text');
    expect((await upload(id, noFile)).status).toBe(400);
    const empty = new FormData();
    empty.append('file', new Blob([]), 'empty.pdf');
    expect((await upload(id, empty)).status).toBe(400);
    const broken = await call(base, `/v1/submissions/${id}/documents`, {
      method: 'POST',
      key: WRITE,
      body: 'not multipart at all',
      contentType: 'multipart/form-data; boundary=xyz',
    });
    expect(broken.status).toBe(400);
    expect(sandbox.getSubmission(id)!.documents).toEqual([]);
  });

  it('answers 403 to a read-only key on an upload, before reading the file', async () => {
    const id = await submission();
    const form = new FormData();
    form.append('file', new Blob(['x']), 'x.txt');
    expect((await upload(id, form, READ)).status).toBe(403);
    expect(sandbox.getSubmission(id)!.documents).toEqual([]);
  });
});

describe('authentication and scopes', () => {
  const endpoints: { name: string; send: (key: string | null) => Promise<Answer> }[] = [
    { name: 'report', send: (key) => get(`/v1/reports/${verifiedWith.slug}`, key) },
    { name: 'search', send: (key) => get('/v1/search?q=acme', key) },
    { name: 'graphql', send: (key) => graphql('{ me { sandbox } }', undefined, key) },
    { name: 'submissions', send: (key) => call(base, '/v1/submissions', { method: 'POST', key, json: {} }) },
    {
      name: 'documents',
      send: (key) => call(base, '/v1/submissions/sub_x/documents', { method: 'POST', key, json: {} }),
    },
  ];

  it.each(endpoints)(
    '$name: 401 without a key, with an unknown key and with a revoked key',
    async ({ send }) => {
      expect((await send(null)).status).toBe(401);
      expect((await send('sk_sandbox_nope')).status).toBe(401);
      expect((await send(REVOKED)).status).toBe(401);
    },
  );

  it('answers 401 to an Authorization header that is not a Bearer token', async () => {
    const response = await fetch(`${base}/v1/search`, { headers: { authorization: READ } });
    expect(response.status).toBe(401);
  });

  it('lets the legacy key read', async () => {
    expect((await get(`/v1/reports/${verifiedWith.slug}`, LEGACY)).status).toBe(200);
    expect((await get('/v1/search?q=acme', LEGACY)).status).toBe(200);
    expect((await graphql('{ me { sandbox } }', undefined, LEGACY)).status).toBe(200);
  });

  it('answers 403 to read-only keys on the write endpoints', async () => {
    for (const key of [READ, LEGACY]) {
      expect((await call(base, '/v1/submissions', { method: 'POST', key, json: {} })).status).toBe(403);
      expect(
        (await call(base, '/v1/submissions/sub_x/documents', { method: 'POST', key, json: {} })).status,
      ).toBe(403);
    }
  });
});

describe('rate limit', () => {
  it('answers 429 with Retry-After in seconds once a key has used its limit, per key', async () => {
    const registered = await call(base, '/__sandbox/keys', {
      method: 'POST',
      key: null,
      json: { scopes: ['read'], rateLimitPerMinute: 3 },
    });
    expect(registered.status).toBe(201);
    const key = (registered.body as Loose).key;
    for (let i = 0; i < 3; i += 1) expect((await get('/v1/search?q=acme', key)).status).toBe(200);
    const limited = await get('/v1/search?q=acme', key);
    expect(limited.status).toBe(429);
    const retryAfter = limited.headers.get('retry-after');
    expect(retryAfter).toMatch(/^\d+$/);
    expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
    expect(Number(retryAfter)).toBeLessThanOrEqual(60);
    // Another key is not affected.
    expect((await get('/v1/search?q=acme', READ)).status).toBe(200);
  });

  it('honours the rateLimitPerMinute option', async () => {
    const small = createSandbox({ rateLimitPerMinute: 2 });
    const listening = await small.listen(0);
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 3; i += 1)
        statuses.push((await call(listening.url, '/v1/search', { key: READ })).status);
      expect(statuses).toEqual([200, 200, 429]);
    } finally {
      await listening.close();
    }
  });
});

describe('rate-limit headers (option)', () => {
  it('sends none unless asked, like the service; then the limit nearest to running out, on 429s too', async () => {
    const sandbox = createSandbox({ rateLimitPerMinute: 100 });
    const listening = await sandbox.listen(0);
    try {
      const plain = await call(listening.url, '/v1/search', { key: READ });
      expect(plain.headers.get('ratelimit-limit')).toBeNull();
      expect(plain.headers.get('x-ratelimit-limit')).toBeNull();

      sandbox.setFaults({ ratePerSecond: 2, rateLimitHeaders: 'ietf' });
      sandbox.resetRateLimits();
      const answers = [];
      for (let i = 0; i < 3; i += 1) answers.push(await call(listening.url, '/v1/search', { key: READ }));
      expect(answers.map((a) => a.status)).toEqual([200, 200, 429]);
      expect(answers.map((a) => a.headers.get('ratelimit-remaining'))).toEqual(['1', '0', '0']);
      expect(answers[0]!.headers.get('ratelimit-limit')).toBe('2');
      expect(answers[0]!.headers.get('ratelimit-policy')).toBe('2;w=1');
      expect(answers[2]!.headers.get('ratelimit-reset')).toBe('1');
      expect(answers[2]!.headers.get('retry-after')).toBe('1');

      sandbox.setFaults({ ratePerSecond: 50, rateLimitHeaders: 'x-ratelimit' });
      sandbox.resetRateLimits();
      const x = await call(listening.url, '/v1/search', { key: READ });
      expect(x.headers.get('x-ratelimit-limit')).toBe('50');
      expect(x.headers.get('x-ratelimit-remaining')).toBe('49');
      expect(Number(x.headers.get('x-ratelimit-reset'))).toBeGreaterThan(Date.now() / 1000);
    } finally {
      await listening.close();
    }
  });
});

describe('request counters', () => {
  it('counts arrivals per route and per key', async () => {
    const key = sandbox.registerKey({ scopes: ['read'] }).key;
    for (let i = 0; i < 3; i += 1) await get(`/v1/reports/${verifiedWith.slug}`, key);
    await get('/v1/search?q=acme', key);
    expect(sandbox.requestCount({ key, route: 'GET /v1/reports/:slug' })).toBe(3);
    expect(sandbox.requestCount({ key, route: 'GET /v1/search' })).toBe(1);
    expect(sandbox.requestCount({ key })).toBe(4);
  });
});

describe('control routes and signed events', () => {
  function verify(delivery: Received): Loose {
    // The package's verifier is checked against the published Standard Webhooks vector in
    // sandbox-signing.test.ts; it shares no code with the sandbox's signer.
    return new Webhook(SECRET).verify(delivery.body, {
      'webhook-id': String(delivery.headers['webhook-id']),
      'webhook-timestamp': String(delivery.headers['webhook-timestamp']),
      'webhook-signature': String(delivery.headers['webhook-signature']),
    });
  }

  it('changes a score, deep-merges the patch and sends a signed score.changed', async () => {
    const target = PUBLISHED.find((r) => r.slug !== verifiedWith.slug && r.score.overall !== 81.5)!;
    const arrival = receiver.next();
    const started = Date.now();
    const answer = await call(base, `/__sandbox/reports/${target.slug}`, {
      method: 'POST',
      key: null,
      json: { score: { overall: 81.5, band: 'strong' } },
    });
    expect(answer.status).toBe(200);
    const delivery = await arrival;
    const event = verify(delivery);
    expect(event).toMatchObject({ type: 'score.changed', data: { slug: target.slug } });
    expect(event.id).toBe(delivery.headers['webhook-id']);
    expect(Number.isNaN(Date.parse(event.created_at))).toBe(false);
    expect(String(delivery.headers['webhook-signature'])).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);

    const report: Loose = (await get(`/v1/reports/${target.slug}`)).body;
    expect(report.score.overall).toBe(81.5);
    expect(report.score.band).toBe('strong');
    expect(report.score.pillars).toEqual(target.score.pillars);
    expect(Date.parse(report.score.scored_at)).toBeGreaterThanOrEqual(started - 1000);
    expect(report.name).toBe(target.name);
  });

  it('replaces arrays and keeps a scored_at given in the patch', async () => {
    const target = PUBLISHED[3]!;
    const pillars = [{ name: 'Only', score: 50, weight: 1 }];
    const arrival = receiver.next();
    await call(base, `/__sandbox/reports/${target.slug}`, {
      method: 'POST',
      key: null,
      json: { score: { pillars, scored_at: '2026-01-02T03:04:05Z' } },
    });
    await arrival;
    const report: Loose = (await get(`/v1/reports/${target.slug}`)).body;
    expect(report.score.pillars).toEqual(pillars);
    expect(report.score.scored_at).toBe('2026-01-02T03:04:05Z');
  });

  it('unpublishes a report (404 afterwards) and sends report.completed when it is published again', async () => {
    const target = PUBLISHED[5]!;
    const before = sandbox.events.length;
    const hidden = await call(base, `/__sandbox/reports/${target.slug}`, {
      method: 'POST',
      key: null,
      json: { published: false },
    });
    expect(hidden.status).toBe(200);
    expect((await get(`/v1/reports/${target.slug}`)).status).toBe(404);
    expect(sandbox.events.length).toBe(before);

    const arrival = receiver.next();
    await call(base, `/__sandbox/reports/${target.slug}`, {
      method: 'POST',
      key: null,
      json: { published: true },
    });
    const event = verify(await arrival);
    expect(event).toMatchObject({ type: 'report.completed', data: { slug: target.slug } });
    expect((await get(`/v1/reports/${target.slug}`)).status).toBe(200);
  });

  it('emits any event kind on request, signed', async () => {
    const arrival = receiver.next();
    const answer = await call(base, '/__sandbox/events', {
      method: 'POST',
      key: null,
      json: { type: 'alert.fired', data: { slug: verifiedWith.slug, alert: 'score_drop' } },
    });
    expect(answer.status).toBe(202);
    const event = verify(await arrival);
    expect(event).toMatchObject({
      type: 'alert.fired',
      data: { slug: verifiedWith.slug, alert: 'score_drop' },
    });
    await sandbox.waitForDeliveries();
    expect(sandbox.deliveries.find((d) => d.id === event.id)).toMatchObject({
      status: 'delivered',
      attempts: 1,
    });
  });

  it('refuses an invalid patch and an unknown slug', async () => {
    const bad = await call(base, `/__sandbox/reports/${verifiedWith.slug}`, {
      method: 'POST',
      key: null,
      json: { score: { overall: 'high' } },
    });
    expect(bad.status).toBe(400);
    const typo = await call(base, `/__sandbox/reports/${verifiedWith.slug}`, {
      method: 'POST',
      key: null,
      json: { scroe: {} },
    });
    expect(typo.status).toBe(400);
    const unknown = await call(base, '/__sandbox/reports/not-a-report', {
      method: 'POST',
      key: null,
      json: { published: true },
    });
    expect(unknown.status).toBe(404);
  });

  it('publishes a report for a submission and sends a signed report.completed naming both', async () => {
    const created = await call(base, '/v1/submissions', {
      method: 'POST',
      key: WRITE,
      json: { name: 'Fjordlight Analytics', city: 'Bergen', country: 'Norway', industry: 'Software' },
    });
    const id = (created.body as Loose).id;
    const arrival = receiver.next();
    const published = await call(base, `/__sandbox/submissions/${id}/publish`, {
      method: 'POST',
      key: null,
      json: { score: { overall: 77.25, band: 'strong' } },
    });
    expect(published.status).toBe(201);
    const slug = (published.body as Loose).report.slug;
    expect(slug).toMatch(/^fjordlight-analytics/);
    const event = verify(await arrival);
    expect(event).toMatchObject({ type: 'report.completed', data: { slug, submission_id: id } });

    const report: Loose = (await get(`/v1/reports/${slug}`)).body;
    expect(report).toMatchObject({ slug, name: 'Fjordlight Analytics', geography: 'Bergen, Norway' });
    expect(report.score.overall).toBe(77.25);
    expect(report.industry).toBe('Software');
    const state: Loose = (await call(base, `/__sandbox/submissions/${id}`, { key: null })).body;
    expect(state).toMatchObject({ status: 'published', slug });
  });

  it('publishes a submission once, under a slug no published report has', async () => {
    const created = await call(base, '/v1/submissions', {
      method: 'POST',
      key: WRITE,
      json: { name: 'Twice Org' },
    });
    const id = (created.body as Loose).id;
    const taken = await call(base, `/__sandbox/submissions/${id}/publish`, {
      method: 'POST',
      key: null,
      json: { slug: verifiedWith.slug },
    });
    expect(taken.status).toBe(409);
    const first = await call(base, `/__sandbox/submissions/${id}/publish`, { method: 'POST', key: null });
    expect(first.status).toBe(201);
    const again = await call(base, `/__sandbox/submissions/${id}/publish`, { method: 'POST', key: null });
    expect(again.status).toBe(409);
    const unknown = await call(base, '/__sandbox/submissions/sub_nope/publish', {
      method: 'POST',
      key: null,
    });
    expect(unknown.status).toBe(404);
    const badPatch = await call(base, '/v1/submissions', {
      method: 'POST',
      key: WRITE,
      json: { name: 'Bad Patch Org' },
    });
    const bad = await call(base, `/__sandbox/submissions/${(badPatch.body as Loose).id}/publish`, {
      method: 'POST',
      key: null,
      json: { score: { overall: 'high' } },
    });
    expect(bad.status).toBe(400);
    expect(sandbox.getSubmission((badPatch.body as Loose).id)?.status).toBe('received');
  });

  // Callers off loopback are refused: the address check is unit-tested (sandbox-units) rather than by
  // sending traffic to a non-loopback address of this machine.
});

describe('fault injection', () => {
  it('answers 503 to the share of requests set by failShare, and clears on DELETE', async () => {
    await call(base, '/__sandbox/faults', { method: 'POST', key: null, json: { failShare: 0.5 } });
    const statuses: number[] = [];
    for (let i = 0; i < 6; i += 1) statuses.push((await get('/v1/search')).status);
    expect(statuses.filter((s) => s === 503)).toHaveLength(3);
    expect(statuses.filter((s) => s === 200)).toHaveLength(3);
    expect((await call(base, '/__sandbox/faults', { method: 'DELETE', key: null })).status).toBe(204);
    for (let i = 0; i < 4; i += 1) expect((await get('/v1/search')).status).toBe(200);
  });

  it('delays answers by delayMs', async () => {
    await call(base, '/__sandbox/faults', { method: 'POST', key: null, json: { delayMs: 150 } });
    const started = performance.now();
    expect((await get('/v1/search')).status).toBe(200);
    expect(performance.now() - started).toBeGreaterThanOrEqual(140);
  });

  it('lowers the rate limit and revokes extra keys until cleared', async () => {
    const fresh = sandbox.registerKey({ scopes: ['read'] }).key;
    await call(base, '/__sandbox/faults', {
      method: 'POST',
      key: null,
      json: { rateLimitPerMinute: 1, revokedKeys: [LEGACY] },
    });
    expect((await get('/v1/search', fresh)).status).toBe(200);
    expect((await get('/v1/search', fresh)).status).toBe(429);
    expect((await get('/v1/search', LEGACY)).status).toBe(401);
    await call(base, '/__sandbox/faults', { method: 'DELETE', key: null });
    expect((await get('/v1/search', LEGACY)).status).toBe(200);
  });

  it('refuses unknown fault settings', async () => {
    const answer = await call(base, '/__sandbox/faults', {
      method: 'POST',
      key: null,
      json: { failShare: 2 },
    });
    expect(answer.status).toBe(400);
  });
});

describe('fixtures served', () => {
  it('serves more than 50 published reports, each by its slug, and hides every unpublished one', async () => {
    expect(PUBLISHED.length).toBeGreaterThan(50);
    const key = sandbox.registerKey({ scopes: ['read'], rateLimitPerMinute: 10_000 }).key;
    const statuses = await Promise.all(
      FIXTURES.map(async (r) => [r, (await get(`/v1/reports/${r.slug}`, key)).status] as const),
    );
    for (const [report, status] of statuses) expect(status, report.slug).toBe(report.published ? 200 : 404);
  });

  it('has the same organisation name in Germany and the United States with different industries', async () => {
    const answer: Loose = (await get('/v1/search?q=Acme%20Robotics&limit=50')).body;
    const exact = answer.results.filter((r: Loose) => r.name === 'Acme Robotics');
    const germany = exact.find((r: Loose) => r.geography.endsWith('Germany'));
    const us = exact.find((r: Loose) => r.geography.endsWith('United States'));
    expect(germany).toBeDefined();
    expect(us).toBeDefined();
    expect(germany.industry).not.toBe(us.industry);
  });
});
