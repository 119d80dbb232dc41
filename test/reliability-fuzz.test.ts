import { randomBytes, randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import fc from 'fast-check';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HubSpotPayloadError, HubSpotSignatureError } from '../connectors/hubspot/errors.js';
import { LOCAL_HUBSPOT_CLIENT_SECRET } from '../connectors/hubspot/local/index.js';
import { HUBSPOT_WEBHOOK } from '../connectors/hubspot/provider.js';
import { parseHubSpotEvents, toCrmChanges } from '../connectors/hubspot/webhooks/webhook-events.js';
import { createHubSpotWebhookRouter } from '../connectors/hubspot/webhooks/webhook-routes.js';
import {
  computeHubSpotSignatureV3,
  verifyHubSpotSignatureV3,
} from '../connectors/hubspot/webhooks/webhook-signature.js';
import { OAuthStateError, OAuthStateStore } from '../src/auth/oauth-state.js';
import { ConfigError, loadConfig } from '../src/config.js';
import { closeRedis, createRedis } from '../src/redis.js';
import { ReportClient, readSearchBody } from '../src/reports/client.js';
import { ReportServiceError } from '../src/reports/errors.js';
import { EventLog } from '../src/storage/event-log.js';
import { Keys } from '../src/storage/keys.js';
import { createReportWebhookRouter } from '../src/webhooks/report-route.js';
import { verifyHex, verifyStandard, WebhookSignatureError } from '../src/webhooks/report-signature.js';
import { REDIS_URL } from './support/redis-url.js';
import { signedHeaders } from './support/report-webhooks.js';
import { deleteKeysWithPrefix } from './support/system-state.js';

/**
 * Every parser that faces the network, fed arbitrary input by fast-check: it either succeeds or throws its own
 * typed error, never a TypeError, a RangeError or a zod error; the two webhook routes answer arbitrary
 * (validly signed) bodies with a 2xx or 4xx, never a 5xx.
 */

const prefix = `rc-test-${randomUUID().slice(0, 8)}`;
const redis = createRedis(REDIS_URL, 'producer');
const SECRET = `whsec_${randomBytes(24).toString('base64')}`;
const RUNS = Number(process.env.FUZZ_RUNS ?? 300);
let server: Server;
let baseUrl: string;

/** Runs `fn`; a throw that is not one of `allowed` fails the property with the input. */
function onlyTyped(fn: () => unknown, ...allowed: (abstract new (...args: never[]) => Error)[]): void {
  try {
    fn();
  } catch (err) {
    if (!allowed.some((cls) => err instanceof cls)) throw err;
  }
}

async function onlyTypedAsync(
  fn: () => Promise<unknown>,
  ...allowed: (abstract new (
    ...args: never[]
  ) => Error)[]
): Promise<void> {
  try {
    await fn();
  } catch (err) {
    if (!allowed.some((cls) => err instanceof cls)) throw err;
  }
}

const headerValue = fc.oneof(
  fc.string(),
  fc.string({ unit: 'grapheme' }),
  fc.constant(''),
  fc.array(fc.string(), { maxLength: 3 }),
);
const anyHeaders = fc.dictionary(
  fc.constantFrom(
    'webhook-id',
    'webhook-timestamp',
    'webhook-signature',
    'x-signature',
    'content-type',
    'x-other',
  ),
  headerValue,
);
const anyBody = fc.oneof(
  fc.jsonValue().map((v) => JSON.stringify(v)),
  fc.string(),
  fc.uint8Array({ maxLength: 300 }).map((b) => Buffer.from(b).toString('latin1')),
);

beforeAll(async () => {
  const keys = new Keys(prefix);
  const app = express();
  app.use(
    createReportWebhookRouter({
      events: new EventLog(redis, keys),
      scheme: 'standard',
      secrets: [SECRET],
      hexHeader: 'x-signature',
      enqueue: async () => {},
      inbox: { accept: async () => 'marked', kickNotQueued: async () => {} },
      kickScoreChanges: async () => {},
      logger: pino({ level: 'silent' }),
    }),
  );
  app.use(
    createHubSpotWebhookRouter({
      clientSecret: LOCAL_HUBSPOT_CLIENT_SECRET,
      publicUrl: 'http://app.example',
      onChanges: async () => {},
      logger: pino({ level: 'silent' }),
    }),
  );
  server = app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
  await closeRedis(redis);
  await deleteKeysWithPrefix(REDIS_URL, prefix);
});

describe('report webhook verification and parsing', () => {
  it('verifyStandard and verifyHex throw only WebhookSignatureError', () => {
    fc.assert(
      fc.property(
        anyHeaders,
        anyBody,
        fc.array(fc.string(), { maxLength: 3 }),
        (headers, body, extraSecrets) => {
          onlyTyped(
            () => verifyStandard([SECRET, ...extraSecrets], headers, Buffer.from(body)),
            WebhookSignatureError,
          );
          onlyTyped(
            () => verifyHex([SECRET, ...extraSecrets], headers, 'x-signature', Buffer.from(body)),
            WebhookSignatureError,
          );
        },
      ),
      { numRuns: RUNS * 3 },
    );
  });

  it('the route answers any validly signed body with 2xx or 4xx', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          anyBody,
          fc
            .record({
              id: fc.option(fc.string()),
              type: fc.oneof(fc.string(), fc.constantFrom('score.changed', 'report.completed')),
              data: fc.anything(),
            })
            .map((v) => JSON.stringify(v)),
        ),
        fc.constantFrom('application/json', 'application/cloudevents+json', 'text/plain', undefined),
        async (body, contentType) => {
          const id = `msg_${randomUUID()}`;
          const res = await fetch(`${baseUrl}/webhooks/reports`, {
            method: 'POST',
            headers: {
              ...(contentType ? { 'content-type': contentType } : {}),
              ...signedHeaders(SECRET, body, id),
            },
            body,
          });
          await res.arrayBuffer();
          expect([200, 202, 400, 413, 415]).toContain(res.status);
        },
      ),
      { numRuns: RUNS },
    );
  });
});

describe('HubSpot webhook verification and parsing', () => {
  const events = fc.array(
    fc.record(
      {
        portalId: fc.oneof(fc.integer(), fc.string()),
        objectId: fc.oneof(fc.integer(), fc.string(), fc.constant(null)),
        subscriptionType: fc.oneof(
          fc.string(),
          fc.constantFrom(
            'company.merge',
            'object.propertyChange',
            'company.deletion',
            'company.propertyChange',
          ),
        ),
        objectTypeId: fc.constantFrom('0-2', '0-1', undefined),
        propertyName: fc.oneof(fc.constantFrom('name', 'domain', 'report_slug'), fc.string()),
        propertyValue: fc.oneof(fc.string(), fc.constant(null)),
        primaryObjectId: fc.oneof(fc.integer(), fc.string()),
        mergedObjectIds: fc.array(fc.oneof(fc.integer(), fc.string(), fc.boolean())),
        newObjectId: fc.oneof(fc.integer(), fc.string()),
        eventId: fc.anything(),
      },
      { requiredKeys: [] },
    ),
    { maxLength: 120 },
  );

  it('verifyHubSpotSignatureV3 throws only HubSpotSignatureError', () => {
    fc.assert(
      fc.property(
        fc.option(fc.string()),
        fc.option(fc.oneof(fc.string(), fc.nat().map(String))),
        anyBody,
        fc.string(),
        (signature, timestamp, body, url) => {
          onlyTyped(
            () =>
              verifyHubSpotSignatureV3({
                method: 'POST',
                url,
                rawBody: Buffer.from(body),
                timestampHeader: timestamp ?? undefined,
                signatureHeader: signature ?? undefined,
                clientSecret: LOCAL_HUBSPOT_CLIENT_SECRET,
              }),
            HubSpotSignatureError,
          );
        },
      ),
      { numRuns: RUNS * 3 },
    );
  });

  it('parseHubSpotEvents throws only HubSpotPayloadError, and toCrmChanges never throws', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          anyBody,
          events.map((e) => JSON.stringify(e)),
        ),
        (body) => {
          let parsed: ReturnType<typeof parseHubSpotEvents> | null = null;
          onlyTyped(() => {
            parsed = parseHubSpotEvents(Buffer.from(body));
          }, HubSpotPayloadError);
          if (parsed) toCrmChanges(parsed);
        },
      ),
      { numRuns: RUNS * 3 },
    );
  });

  it('the route answers any validly signed body with 204, 400 or 413', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          anyBody,
          events.map((e) => JSON.stringify(e)),
        ),
        async (body) => {
          const timestamp = String(Date.now());
          const url = 'http://app.example/webhooks/hubspot';
          const res = await fetch(`${baseUrl}/webhooks/hubspot`, {
            method: 'POST',
            headers: {
              'content-type': 'application/json',
              [HUBSPOT_WEBHOOK.timestampHeader]: timestamp,
              [HUBSPOT_WEBHOOK.signatureHeader]: computeHubSpotSignatureV3(
                LOCAL_HUBSPOT_CLIENT_SECRET,
                'POST',
                url,
                body,
                timestamp,
              ),
            },
            body,
          });
          await res.arrayBuffer();
          expect([204, 400, 413]).toContain(res.status);
        },
      ),
      { numRuns: RUNS },
    );
  });
});

describe('report client response parsing', () => {
  const statuses = fc.constantFrom(200, 201, 204, 301, 302, 400, 401, 403, 404, 409, 418, 429, 500, 502, 503);
  const answer = fc.record({
    status: statuses,
    body: fc.oneof(
      fc.jsonValue().map((v) => JSON.stringify(v)),
      fc.string(),
      fc.constant(''),
    ),
    contentType: fc.constantFrom(
      'application/json',
      'text/html',
      'text/plain',
      'application/problem+json',
      '',
    ),
    retryAfter: fc.option(
      fc.oneof(
        fc.string(),
        fc.nat().map(String),
        fc.date({ noInvalidDate: true }).map((d) => d.toUTCString()),
      ),
    ),
  });

  function clientAnswering(a: {
    status: number;
    body: string;
    contentType: string;
    retryAfter: string | null;
  }): ReportClient {
    return new ReportClient({
      baseUrl: 'http://reports.invalid/api',
      apiKey: 'sk_fuzz',
      maxRetries: 0,
      sleep: async () => {},
      fetch: async () => {
        const headers = new Headers();
        if (a.contentType) headers.set('content-type', a.contentType);
        if (a.retryAfter !== null) {
          try {
            headers.set('retry-after', a.retryAfter);
          } catch {
            // Not a legal header value: the service could not have sent it.
          }
        }
        const empty = a.status === 204 || a.status === 304;
        return new Response(empty ? null : a.body, { status: a.status, headers });
      },
    });
  }

  it('getReport, search, graphqlSearch and me reject only with ReportServiceError', async () => {
    await fc.assert(
      fc.asyncProperty(answer, async (a) => {
        const client = clientAnswering(a);
        await onlyTypedAsync(() => client.getReport('some-slug'), ReportServiceError);
        await onlyTypedAsync(() => client.search({ q: 'acme', limit: 10 }), ReportServiceError);
        await onlyTypedAsync(() => client.graphqlSearch({ q: 'acme' }), ReportServiceError);
        await onlyTypedAsync(() => client.me(), ReportServiceError);
      }),
      { numRuns: RUNS },
    );
  });

  it('readSearchBody throws only ReportServiceError', () => {
    const hit = fc.record(
      { slug: fc.anything(), name: fc.anything(), score: fc.anything(), node: fc.anything() },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(
        fc.oneof(
          fc.jsonValue(),
          fc.array(hit),
          fc.dictionary(
            fc.constantFrom('results', 'items', 'data', 'reports', 'hits', 'nodes', 'edges', 'x'),
            fc.oneof(fc.array(hit), fc.jsonValue()),
          ),
        ),
        (body) => {
          onlyTyped(() => readSearchBody(body), ReportServiceError);
        },
      ),
      { numRuns: RUNS * 3 },
    );
  });
});

describe('OAuth state consumption', () => {
  it('consume throws only OAuthStateError, whatever the state looks like', async () => {
    const states = new OAuthStateStore(randomBytes(32), { secureCookies: false });
    const issued = states.issue('hubspot');
    const [nonce, , signature] = issued.state.split('.') as [string, string, string];
    const cookie = issued.cookie.split(';')[0];
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.anything(),
          fc.string(),
          fc.tuple(fc.string(), fc.string(), fc.string()).map(([a, b, c]) => `${a}.${b}.${c}`),
          fc.string().map((s) => `${nonce}.hubspot.${s}`),
          fc.string().map((s) => `${nonce}.${s}.${signature}`),
          fc.string().map((s) => `${s}.hubspot.${signature}`),
          fc.constant(`${issued.state}.extra`),
        ),
        fc.constantFrom('hubspot', 'salesforce'),
        fc.oneof(
          fc.constant(undefined),
          fc.constant(cookie),
          fc.string(),
          fc.string().map((s) => `rc_oauth_hubspot=${s}`),
          fc.string().map((s) => `rc_oauth_hubspot=v1.${s}`),
        ),
        async (state, provider, cookieHeader) => {
          await onlyTypedAsync(async () => states.consume(provider, state, cookieHeader), OAuthStateError);
        },
      ),
      { numRuns: RUNS },
    );
  });
});

describe('configuration parsing', () => {
  const VARIABLES = [
    'REDIS_URL',
    'PORT',
    'APP_URL',
    'ENCRYPTION_KEY',
    'ADMIN_TOKEN',
    'REPORTS_API_URL',
    'REPORTS_API_KEY',
    'REPORTS_WEBHOOK_SECRET',
    'REPORTS_WEBHOOK_SCHEME',
    'REPORTS_WEBHOOK_HEADER',
    'REPORTS_RATE_PER_MINUTE',
    'REPORTS_TIMEOUT_MS',
    'HUBSPOT_CLIENT_ID',
    'HUBSPOT_CLIENT_SECRET',
    'HUBSPOT_ACCESS_TOKEN',
    'HUBSPOT_API_URL',
    'HUBSPOT_AUTHORIZE_URL',
    'SALESFORCE_CLIENT_ID',
    'SALESFORCE_CLIENT_SECRET',
    'SALESFORCE_LOGIN_URL',
    'SALESFORCE_INSTANCE_URL',
    'SALESFORCE_ACCESS_TOKEN',
    'SALESFORCE_API_VERSION',
    'SALESFORCE_POLL_SECONDS',
    'SALESFORCE_USAGE_PAUSE_SHARE',
    'SALESFORCE_EXTRA_HOSTS',
    'SALESFORCE_ALLOW_LOCAL_HOSTS',
    'NODE_ENV',
    'RECONCILE_HOURS',
    'REDIS_PREFIX',
    'LOG_LEVEL',
  ];
  const plausible = fc.oneof(
    fc.string(),
    fc.constantFrom(
      '',
      ' ',
      '0',
      '-1',
      '1e309',
      'NaN',
      'http://x',
      'https://x.example/',
      'true',
      'production',
      '*.x.example',
      'redis://127.0.0.1:6379/13',
      'rediss://h',
      'ftp://x',
      'standard',
      'hex',
      'info',
      '63.0',
    ),
    fc.uint8Array({ minLength: 32, maxLength: 32 }).map((b) => Buffer.from(b).toString('base64')),
    fc.double().map(String),
  );

  it('loadConfig returns a configuration or throws ConfigError', () => {
    fc.assert(
      fc.property(
        fc.dictionary(fc.constantFrom(...VARIABLES), plausible),
        fc.constantFrom('production', 'demo') as fc.Arbitrary<'production' | 'demo'>,
        (env, mode) => {
          onlyTyped(() => loadConfig(env, { mode, envFile: null }), ConfigError);
        },
      ),
      { numRuns: RUNS * 5 },
    );
  });
});
