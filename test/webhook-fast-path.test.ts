import { randomUUID } from 'node:crypto';
import { request } from 'node:http';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalSystem } from '../local/system.js';
import { startTestSystem, stopTestSystem } from './support/local-system.js';
import { signedHeaders } from './support/report-webhooks.js';

/**
 * `POST /webhooks/reports` is answered straight off node:http (server/webhook-fast-path.ts); every other
 * spelling of it still goes through Express's route. Both must answer every delivery alike: same status, same
 * body, same security headers. `/webhooks/reports/` (trailing slash) reaches the Express route.
 */

let system: LocalSystem;
let secret: string;
let slug: string;

beforeAll(async () => {
  system = await startTestSystem({ companies: 20, logLevel: 'silent' });
  secret = system.ctx.config.reports.webhookSecrets[0]!;
  const first = system.sandbox.listReports()[0];
  if (!first) throw new Error('the sandbox has no report');
  slug = first.slug;
}, 120_000);

afterAll(async () => {
  await stopTestSystem(system);
});

interface Answer {
  status: number;
  body: unknown;
  headers: Record<string, string>;
}

const VOLATILE = new Set(['date', 'etag', 'content-length', 'connection', 'keep-alive']);

const SECURITY_HEADERS = [
  'content-security-policy',
  'x-frame-options',
  'x-content-type-options',
  'referrer-policy',
  'cross-origin-opener-policy',
];

async function post(path: string, body: string | Buffer, headers: Record<string, string>): Promise<Answer> {
  const res = await fetch(`${system.appUrl}${path}`, { method: 'POST', headers, body });
  const text = await res.text();
  return {
    status: res.status,
    body: text ? JSON.parse(text) : null,
    headers: Object.fromEntries(res.headers),
  };
}

function scoreChanged(id = `evt_${randomUUID()}`): { id: string; body: string } {
  const body = JSON.stringify({
    id,
    type: 'score.changed',
    created_at: new Date().toISOString(),
    data: { slug },
  });
  return { id, body };
}

/** Each case makes its own delivery (own id) for each path, so no answer is a duplicate of the other's. */
const cases: Array<[string, () => { body: string | Buffer; headers: Record<string, string> }]> = [
  [
    'a signed score change',
    () => {
      const { id, body } = scoreChanged();
      return { body, headers: { 'content-type': 'application/json', ...signedHeaders(secret, body, id) } };
    },
  ],
  [
    'a wrong signature',
    () => {
      const { id, body } = scoreChanged();
      return {
        body,
        headers: { 'content-type': 'application/json', ...signedHeaders('whsec_b3RoZXI=', body, id) },
      };
    },
  ],
  [
    'no signature headers',
    () => ({ body: scoreChanged().body, headers: { 'content-type': 'application/json' } }),
  ],
  [
    'a signed body of another content type',
    () => {
      const { id, body } = scoreChanged();
      return { body, headers: { 'content-type': 'text/plain', ...signedHeaders(secret, body, id) } };
    },
  ],
  [
    'signed bytes that are not JSON',
    () => {
      const id = `evt_${randomUUID()}`;
      const body = '{"type": "score.changed",';
      return { body, headers: { 'content-type': 'application/json', ...signedHeaders(secret, body, id) } };
    },
  ],
  [
    'a score change without a slug',
    () => {
      const id = `evt_${randomUUID()}`;
      const body = JSON.stringify({ id, type: 'score.changed', data: {} });
      return { body, headers: { 'content-type': 'application/json', ...signedHeaders(secret, body, id) } };
    },
  ],
  [
    'an event type the connector does not act on',
    () => {
      const id = `evt_${randomUUID()}`;
      const body = JSON.stringify({ id, type: 'report.viewed', data: { slug } });
      return { body, headers: { 'content-type': 'application/json', ...signedHeaders(secret, body, id) } };
    },
  ],
];

describe('the direct path answers as the Express route does', () => {
  it.each(cases)('%s', async (_what, make) => {
    const direct = make();
    const viaExpress = make();
    const a = await post('/webhooks/reports', direct.body, direct.headers);
    const b = await post('/webhooks/reports/', viaExpress.body, viaExpress.headers);
    expect(a.status).toBe(b.status);
    expect(a.body).toEqual(b.body);
    // Every header alike but those of the moment or of Express's own making (ETag).
    const settled = (h: Record<string, string>) =>
      Object.fromEntries(Object.entries(h).filter(([name]) => !VOLATILE.has(name)));
    expect(settled(a.headers)).toEqual(settled(b.headers));
    for (const header of SECURITY_HEADERS) expect(b.headers[header], header).toBeDefined();
    expect(a.headers['x-powered-by']).toBeUndefined();
  });

  it('acknowledges a score change once and a redelivery as a duplicate, recorded in the event log', async () => {
    const { id, body } = scoreChanged();
    const headers = { 'content-type': 'application/json', ...signedHeaders(secret, body, id) };
    const first = await post('/webhooks/reports', body, headers);
    const again = await post('/webhooks/reports?attempt=2', body, headers);
    expect([first.status, again.status]).toEqual([202, 200]);
    expect(again.body).toEqual({ received: true, duplicate: true });
    const logged = (await system.ctx.events.recent(50)).filter((e) => e.id === id);
    expect(logged).toHaveLength(1);
  });
});

describe('bodies the direct path does not read itself, or refuses', () => {
  it('leaves a gzip-compressed delivery to Express, which inflates it and accepts it', async () => {
    const { id, body } = scoreChanged();
    const answer = await post('/webhooks/reports', gzipSync(body), {
      'content-type': 'application/json',
      'content-encoding': 'gzip',
      ...signedHeaders(secret, body, id),
    });
    expect(answer.status).toBe(202);
  });

  it('refuses a body declared over 1 MB before reading it, and one sent in chunks past 1 MB', async () => {
    const big = Buffer.alloc(1024 * 1024 + 10, 'a');
    const declared = await post('/webhooks/reports', big, { 'content-type': 'application/json' });
    expect(declared.status).toBe(413);
    expect(declared.body).toEqual({ error: 'event body over 1 MB' });

    const chunked = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const url = new URL('/webhooks/reports', system.appUrl);
      const req = request(
        url,
        { method: 'POST', headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' } },
        (res) => {
          let text = '';
          res.on('data', (c: Buffer) => {
            text += c.toString();
          });
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
        },
      );
      // The answer may come while chunks are still being written: the server stops reading then.
      req.on('error', reject);
      for (let i = 0; i < 20; i++) req.write(Buffer.alloc(64 * 1024, 'b'));
      req.end();
    });
    expect(chunked.status).toBe(413);
    expect(JSON.parse(chunked.body)).toEqual({ error: 'event body over 1 MB' });
  });
});
