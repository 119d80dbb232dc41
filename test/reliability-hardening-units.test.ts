import fc from 'fast-check';
import nock from 'nock';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { reviewDecisionSchema } from '../src/admin/schemas.js';
import { ConfigError, loadConfig } from '../src/config.js';
import { jobIdPart } from '../src/pipeline/queues.js';
import { ReportClient } from '../src/reports/client.js';
import { ReportInvalidRequestError } from '../src/reports/errors.js';
import { isValidSlug, slugProblem } from '../src/reports/slug.js';

/**
 * Unit-level halves of issue 16: the job-id encoding is one-to-one (point 9), one definition of a valid slug
 * that the client enforces before it calls anything (point 5), and `TRUST_PROXY` (point 7).
 */

describe('job-id encoding (issue 16, point 9)', () => {
  it('keeps the two ids the review found apart', () => {
    expect(jobIdPart('a/')).not.toBe(jobIdPart('a\x02f'));
  });

  it('is one-to-one on arbitrary strings, also when parts are joined with "-"', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), fc.string({ unit: 'binary' }), (a, b) => {
        fc.pre(a !== b);
        expect(jobIdPart(a)).not.toBe(jobIdPart(b));
      }),
      { numRuns: 2_000 },
    );
    fc.assert(
      fc.property(
        fc.tuple(fc.string(), fc.string()),
        fc.tuple(fc.string(), fc.string()),
        ([a1, a2], [b1, b2]) => {
          fc.pre(a1 !== b1 || a2 !== b2);
          expect(`${jobIdPart(a1)}-${jobIdPart(a2)}`).not.toBe(`${jobIdPart(b1)}-${jobIdPart(b2)}`);
        },
      ),
      { numRuns: 2_000 },
    );
    // Pairs built to collide under a variable-width escape.
    expect(jobIdPart('x-y')).not.toBe(jobIdPart('x~2dy'));
    expect(`${jobIdPart('a-b')}-${jobIdPart('c')}`).not.toBe(`${jobIdPart('a')}-${jobIdPart('b-c')}`);
  });

  it('never emits a colon (BullMQ refuses it) and leaves plain ids readable', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (s) => {
        expect(jobIdPart(s)).not.toContain(':');
      }),
    );
    expect(jobIdPart('acme-robotics')).toMatch(/^acme.+robotics$/);
    expect(jobIdPart('evt_123.a')).toBe('evt_123.a');
  });
});

describe('one definition of a valid slug (issue 16, point 5)', () => {
  const BASE = 'https://reports.test/api';
  beforeAll(() => nock.disableNetConnect());
  afterEach(() => nock.cleanAll());

  it('admits the fixture style and refuses dot segments, separators, escapes and empties', () => {
    for (const ok of ['acme-robotics', 'a', 'north-wind-analytics-pty-ltd', 'r2.d2', 'x_y~z']) {
      expect(isValidSlug(ok), ok).toBe(true);
    }
    for (const bad of ['', '.', '..', '...', '.hidden', 'a/b', 'a\\b', '%2e%2e', 'a?b', 'a#b', ' a', 'a b']) {
      expect(isValidSlug(bad), JSON.stringify(bad)).toBe(false);
      expect(slugProblem(bad)).toMatch(/slug/);
    }
    expect(isValidSlug('a'.repeat(201))).toBe(false);
  });

  it('the client refuses an invalid slug before any request is made', async () => {
    // Any request at all would hit this interceptor; none may.
    const scope = nock(BASE).get(/.*/).reply(200, {});
    const client = new ReportClient({ baseUrl: BASE, apiKey: 'sk_test_key', maxRetries: 0 });
    for (const slug of ['..', '.', '%2e%2e', 'a/../../admin']) {
      await expect(client.getReport(slug), slug).rejects.toBeInstanceOf(ReportInvalidRequestError);
    }
    expect(scope.isDone()).toBe(false);
  });

  it('the admin API refuses the same slugs (400 from the schema)', () => {
    for (const slug of ['..', '.', '%2e%2e']) {
      expect(reviewDecisionSchema.safeParse({ action: 'set', slug }).success, slug).toBe(false);
    }
    expect(reviewDecisionSchema.safeParse({ action: 'set', slug: 'acme-robotics' }).success).toBe(true);
  });
});

describe('TRUST_PROXY (issue 16, point 7)', () => {
  const base = {
    ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64'),
    ADMIN_TOKEN: 'an-admin-token-of-some-length',
    REPORTS_API_URL: 'http://127.0.0.1:4010/api',
  };
  const load = (extra: Record<string, string>) => loadConfig({ ...base, ...extra }, { envFile: null });

  it('trusts no proxy by default', () => {
    expect(load({}).trustProxy).toBe(false);
    expect(load({ TRUST_PROXY: '' }).trustProxy).toBe(false);
  });

  it('takes the Express trust proxy forms but true: a hop count, names, addresses and subnets', () => {
    expect(load({ TRUST_PROXY: '1' }).trustProxy).toBe(1);
    expect(load({ TRUST_PROXY: 'loopback' }).trustProxy).toEqual(['loopback']);
    expect(load({ TRUST_PROXY: '10.0.0.0/8, 127.0.0.1 ,uniquelocal' }).trustProxy).toEqual([
      '10.0.0.0/8',
      '127.0.0.1',
      'uniquelocal',
    ]);
  });

  it('refuses anything else with a message naming the variable', () => {
    for (const bad of ['yes please', '10.0.0.0/99', 'example.com', '-1', 'true']) {
      expect(() => load({ TRUST_PROXY: bad }), bad).toThrow(ConfigError);
      try {
        load({ TRUST_PROXY: bad });
      } catch (err) {
        expect((err as ConfigError).variable).toBe('TRUST_PROXY');
      }
    }
  });
});
