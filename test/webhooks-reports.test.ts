import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import express from 'express';
import { pino } from 'pino';
import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { ScoreChangeInbox } from '../src/pipeline/score-changes/inbox.js';
import { closeRedis, createRedis, waitForRedis } from '../src/redis.js';
import { EventLog } from '../src/storage/event-log.js';
import { Keys } from '../src/storage/keys.js';
import { HmacSha256 } from '../src/webhooks/hmac-sha256.js';
import { createReportWebhookRouter, type ReportWebhookDeps } from '../src/webhooks/report-route.js';
import { verifyHex, verifyStandard, WebhookSignatureError } from '../src/webhooks/report-signature.js';
import { type LoopbackServer, listenOnLoopback } from './support/loopback-server.js';
import { REDIS_URL } from './support/redis-url.js';

const redis = createRedis(REDIS_URL, 'producer');
const prefix = `rc-test-${randomUUID()}`;
const keys = new Keys(prefix);
const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const OTHER_SECRET = `whsec_${Buffer.from('another secret of thirty-two by').toString('base64')}`;

afterAll(async () => {
  const found = await redis.keys(`${prefix}*`);
  if (found.length) await redis.del(...found);
  await closeRedis(redis);
});

function signStandard(secret: string, id: string, ts: number, body: string): string {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${ts}.${body}`).digest('base64')}`;
}

describe('Standard Webhooks verification', () => {
  afterEach(() => vi.useRealTimers());

  it('accepts the published example', () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(1614265330 * 1000 + 10_000);
    const headers = {
      'webhook-id': 'msg_p5jXN8AQM9LWM0D4loKWxJek',
      'webhook-timestamp': '1614265330',
      'webhook-signature': 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
    };
    expect(verifyStandard([SECRET], headers, Buffer.from('{"test": 2432232314}')).id).toBe(
      'msg_p5jXN8AQM9LWM0D4loKWxJek',
    );
  });

  it('refuses the published example once its timestamp is more than five minutes old, and in the future', () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const headers = {
      'webhook-id': 'msg_p5jXN8AQM9LWM0D4loKWxJek',
      'webhook-timestamp': '1614265330',
      'webhook-signature': 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
    };
    vi.setSystemTime((1614265330 + 301) * 1000);
    expect(() => verifyStandard([SECRET], headers, Buffer.from('{"test": 2432232314}'))).toThrow(
      expect.objectContaining({ reason: 'timestamp_too_old' }),
    );
    vi.setSystemTime((1614265330 - 301) * 1000);
    expect(() => verifyStandard([SECRET], headers, Buffer.from('{"test": 2432232314}'))).toThrow(
      expect.objectContaining({ reason: 'timestamp_too_new' }),
    );
  });

  it('passes when any one of several signatures is valid, and with any of several secrets (rotation)', () => {
    const ts = Math.floor(Date.now() / 1000);
    const body = '{"id":"e1"}';
    const good = signStandard(OTHER_SECRET, 'e1', ts, body);
    const headers = {
      'webhook-id': 'e1',
      'webhook-timestamp': String(ts),
      'webhook-signature': `v1,AAAA ${good}`,
    };
    expect(verifyStandard([SECRET, OTHER_SECRET], headers, Buffer.from(body)).id).toBe('e1');
    expect(() => verifyStandard([SECRET], headers, Buffer.from(body))).toThrow(WebhookSignatureError);
  });

  it('accepts what the standardwebhooks package signs, a UTF-8 body included; refuses an unreadable timestamp', () => {
    const ts = Math.floor(Date.now() / 1000);
    const body = '{"id":"e1","data":{"slug":"société-générale","note":"日本"}}';
    const headers = {
      'webhook-id': 'e1',
      'webhook-timestamp': String(ts),
      'webhook-signature': new Webhook(SECRET).sign('e1', new Date(ts * 1000), body),
    };
    expect(verifyStandard([SECRET], headers, Buffer.from(body)).id).toBe('e1');
    expect(() =>
      verifyStandard([SECRET], { ...headers, 'webhook-timestamp': 'soon' }, Buffer.from(body)),
    ).toThrow(expect.objectContaining({ reason: 'bad_timestamp' }));
  });

  it('computes the same HMAC-SHA256 as node:crypto for keys shorter than, equal to and longer than a block', () => {
    for (const length of [1, 24, 32, 63, 64, 65, 200]) {
      const key = randomBytes(length);
      const parts = [Buffer.from('msg_1.1700000000.'), randomBytes(length * 3)];
      expect(new HmacSha256(key).base64(...parts)).toBe(
        createHmac('sha256', key).update(Buffer.concat(parts)).digest('base64'),
      );
    }
  });

  it('refuses a tampered body, id or timestamp', () => {
    const ts = Math.floor(Date.now() / 1000);
    const body = '{"id":"e1","data":{"slug":"a"}}';
    const sig = signStandard(SECRET, 'e1', ts, body);
    const ok = { 'webhook-id': 'e1', 'webhook-timestamp': String(ts), 'webhook-signature': sig };
    expect(() => verifyStandard([SECRET], ok, Buffer.from(body.replace('"a"', '"b"')))).toThrow(
      WebhookSignatureError,
    );
    expect(() => verifyStandard([SECRET], { ...ok, 'webhook-id': 'e2' }, Buffer.from(body))).toThrow(
      WebhookSignatureError,
    );
    expect(() =>
      verifyStandard([SECRET], { ...ok, 'webhook-timestamp': String(ts - 1) }, Buffer.from(body)),
    ).toThrow(WebhookSignatureError);
    expect(() =>
      verifyStandard([SECRET], { ...ok, 'webhook-signature': undefined }, Buffer.from(body)),
    ).toThrow(expect.objectContaining({ reason: 'missing_headers' }));
  });
});

describe('hex verification', () => {
  it("accepts GitHub's published vector, with and without the sha256= prefix", () => {
    const hex = '757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17';
    const body = Buffer.from('Hello, World!');
    expect(() =>
      verifyHex(["It's a Secret to Everybody"], { 'x-signature': `sha256=${hex}` }, 'x-signature', body),
    ).not.toThrow();
    expect(() =>
      verifyHex(["It's a Secret to Everybody"], { 'x-signature': hex }, 'x-signature', body),
    ).not.toThrow();
    expect(() =>
      verifyHex(['wrong', "It's a Secret to Everybody"], { 'x-signature': hex }, 'x-signature', body),
    ).not.toThrow();
  });

  it('refuses a wrong secret, a tampered body and a short signature', () => {
    const hex = '757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17';
    expect(() =>
      verifyHex(['wrong'], { 'x-signature': hex }, 'x-signature', Buffer.from('Hello, World!')),
    ).toThrow(WebhookSignatureError);
    expect(() =>
      verifyHex(
        ["It's a Secret to Everybody"],
        { 'x-signature': hex },
        'x-signature',
        Buffer.from('Hello, World?'),
      ),
    ).toThrow(WebhookSignatureError);
    expect(() =>
      verifyHex(
        ["It's a Secret to Everybody"],
        { 'x-signature': hex.slice(2) },
        'x-signature',
        Buffer.from('Hello, World!'),
      ),
    ).toThrow(WebhookSignatureError);
  });
});

/**
 * The real inbox (its one-round-trip script decides what is a duplicate); what it marks is also noted in
 * `into`, as the fan-out would take it.
 */
function acceptInto(into: { id: string; type: string; slug: string }[]): ReportWebhookDeps['inbox'] {
  const inbox = new ScoreChangeInbox(redis, keys);
  return {
    accept: async (entry) => {
      const outcome = await inbox.accept(entry);
      if (outcome !== 'duplicate') into.push({ id: entry.id, type: entry.type, slug: entry.slug });
      return outcome;
    },
    kickNotQueued: () => inbox.kickNotQueued(),
  };
}

/** The route's dependencies for one signing scheme: the real event log and inbox, events noted in `enqueued`. */
function routeDeps(
  scheme: ReportWebhookDeps['scheme'],
  secret: string,
  enqueued: { id: string; type: string; slug: string }[],
): ReportWebhookDeps {
  return {
    events: new EventLog(redis, keys),
    scheme,
    secrets: [secret],
    hexHeader: 'x-signature',
    enqueue: async (e) => {
      enqueued.push(e);
    },
    inbox: acceptInto(enqueued),
    kickScoreChanges: async () => {},
    logger: pino({ level: 'silent' }),
  };
}

describe('POST /webhooks/reports', () => {
  let served: LoopbackServer;
  let url: string;
  const enqueued: { id: string; type: string; slug: string }[] = [];
  let deps: ReportWebhookDeps;

  beforeAll(async () => {
    // The route's connection fails fast by design (503 while Redis is away), so it must be up first.
    await waitForRedis(redis);
    deps = routeDeps('standard', SECRET, enqueued);
    const app = express();
    app.use(createReportWebhookRouter(deps));
    served = await listenOnLoopback(app);
    url = `${served.url}/webhooks/reports`;
  });

  afterAll(async () => {
    await served.close();
  });

  async function post(
    body: string,
    opts: { id?: string; secret?: string; ts?: number; contentType?: string } = {},
  ) {
    const id = opts.id ?? `msg_${randomUUID()}`;
    const ts = opts.ts ?? Math.floor(Date.now() / 1000);
    return fetch(url, {
      method: 'POST',
      headers: {
        'content-type': opts.contentType ?? 'application/json',
        'webhook-id': id,
        'webhook-timestamp': String(ts),
        'webhook-signature': signStandard(opts.secret ?? SECRET, id, ts, body),
      },
      body,
    });
  }

  const event = (type: string, slug?: string) =>
    JSON.stringify({
      id: `evt_${randomUUID()}`,
      type,
      created_at: new Date().toISOString(),
      data: slug ? { slug } : {},
    });

  it('queues score.changed and answers 202', async () => {
    enqueued.length = 0;
    const res = await post(event('score.changed', 'acme'), { id: 'msg_one' });
    expect(res.status).toBe(202);
    expect(enqueued).toEqual([{ id: 'msg_one', type: 'score.changed', slug: 'acme' }]);
  });

  it('acknowledges a redelivery without processing it again', async () => {
    enqueued.length = 0;
    const body = event('score.changed', 'dup');
    expect((await post(body, { id: 'msg_dup' })).status).toBe(202);
    const again = await post(body, { id: 'msg_dup' });
    expect(again.status).toBe(200);
    expect(await again.json()).toMatchObject({ duplicate: true });
    expect(enqueued).toHaveLength(1);
  });

  it('records unknown kinds without queueing work', async () => {
    enqueued.length = 0;
    expect((await post(event('portfolio.rebalanced'))).status).toBe(202);
    expect(enqueued).toEqual([]);
    const log = await deps.events.recent(5);
    expect(log.map((e) => e.type)).toContain('portfolio.rebalanced');
  });

  it('queues alert.fired with its readable line and time; one without a slug is recorded, never refused', async () => {
    enqueued.length = 0;
    const at = '2026-11-23T10:00:00.000Z';
    const withSlug = JSON.stringify({
      id: `evt_${randomUUID()}`,
      type: 'alert.fired',
      created_at: at,
      data: { slug: 'acme', title: 'Score fell', severity: 'high', extra: { any: ['thing'] } },
    });
    expect((await post(withSlug)).status).toBe(202);
    expect(enqueued).toEqual([
      expect.objectContaining({
        type: 'alert.fired',
        slug: 'acme',
        alert: { line: 'High alert: Score fell', at },
      }),
    ]);
    enqueued.length = 0;
    // A time later than its arrival is stored as the arrival: a future-dated alert would stand as the newest.
    const ahead = JSON.stringify({
      id: `evt_${randomUUID()}`,
      type: 'alert.fired',
      created_at: new Date(Date.now() + 30 * 86_400_000).toISOString(),
      data: { slug: 'acme', title: 'From the future' },
    });
    expect((await post(ahead)).status).toBe(202);
    const storedAt = (enqueued[0] as { alert?: { at: string } } | undefined)?.alert?.at;
    expect(Date.parse(storedAt ?? '')).toBeLessThanOrEqual(Date.now());
    enqueued.length = 0;
    for (const data of [{}, { slug: 42.5 }, [1, 2], 'text', { slug: { nested: true } }]) {
      const body = JSON.stringify({ id: `evt_${randomUUID()}`, type: 'alert.fired', data });
      const res = await post(body);
      expect(res.status, JSON.stringify(data)).toBe(202);
    }
    // A number slug is read as text; the others name no report and queue nothing.
    expect(enqueued.map((e) => e.slug)).toEqual(['42.5']);
    const log = await deps.events.recent(10);
    expect(log.filter((e) => e.type === 'alert.fired' && e.outcome === 'recorded').length).toBe(4);
  });

  it.each([
    ['a wrong secret', { secret: OTHER_SECRET }, 401],
    ['an old timestamp', { ts: Math.floor(Date.now() / 1000) - 3600 }, 401],
    ['a future timestamp', { ts: Math.floor(Date.now() / 1000) + 3600 }, 401],
  ])('refuses %s with %i', async (_label, opts, status) => {
    enqueued.length = 0;
    expect((await post(event('score.changed', 'x'), opts)).status).toBe(status);
    expect(enqueued).toEqual([]);
  });

  it('refuses an unsigned request', async () => {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: event('score.changed', 'x'),
    });
    expect(res.status).toBe(401);
  });

  it('answers 400 to malformed JSON and to score.changed without a slug', async () => {
    expect((await post('{"type": "score.changed",')).status).toBe(400);
    expect((await post(event('score.changed'))).status).toBe(400);
    expect((await post('[1,2,3]')).status).toBe(400);
  });

  it('answers 415 to a signed body of the wrong content type', async () => {
    expect((await post(event('score.changed', 'x'), { contentType: 'text/plain' })).status).toBe(415);
  });

  it('answers 413 to a body over 1 MB', async () => {
    const big = JSON.stringify({
      id: 'big',
      type: 'score.changed',
      data: { slug: 'x', pad: 'a'.repeat(1024 * 1024) },
    });
    expect((await post(big)).status).toBe(413);
  });

  it('answers 503 when Redis cannot record the event, and the retry is processed, not treated as a duplicate', async () => {
    enqueued.length = 0;
    const body = event('score.changed', 'retry-me');
    const closed = async () => Promise.reject(new Error('Connection is closed'));
    const failing = { ...deps, enqueue: closed, inbox: { accept: closed, kickNotQueued: closed } };
    const app = express();
    app.use(createReportWebhookRouter(failing));
    const failingServer = await listenOnLoopback(app);
    const failUrl = `${failingServer.url}/webhooks/reports`;
    const ts = Math.floor(Date.now() / 1000);
    const first = await fetch(failUrl, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'webhook-id': 'msg_retry',
        'webhook-timestamp': String(ts),
        'webhook-signature': signStandard(SECRET, 'msg_retry', ts, body),
      },
      body,
    });
    await failingServer.close();
    expect(first.status).toBe(503);
    const retry = await post(body, { id: 'msg_retry' });
    expect(retry.status).toBe(202);
    expect(enqueued.map((e) => e.id)).toEqual(['msg_retry']);
  });
});

describe('POST /webhooks/reports with the hex scheme: created_at (issue 16, point 8)', () => {
  const HEX_SECRET = 'a hex scheme secret, as written';
  let served: LoopbackServer;
  let url: string;
  const enqueued: { id: string; type: string; slug: string }[] = [];

  beforeAll(async () => {
    await waitForRedis(redis);
    const app = express();
    app.use(createReportWebhookRouter(routeDeps('hex', HEX_SECRET, enqueued)));
    served = await listenOnLoopback(app);
    url = `${served.url}/webhooks/reports`;
  });

  afterAll(async () => {
    await served.close();
  });

  async function postHex(payload: Record<string, unknown>): Promise<{ status: number; body: unknown }> {
    const body = JSON.stringify(payload);
    const sig = createHmac('sha256', Buffer.from(HEX_SECRET, 'utf8')).update(body).digest('hex');
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-signature': `sha256=${sig}` },
      body,
    });
    return { status: res.status, body: await res.json() };
  }

  const at = (offsetMs: number) => new Date(Date.now() + offsetMs).toISOString();
  const hexEvent = (createdAt: string | undefined) => ({
    id: `evt_${randomUUID()}`,
    type: 'score.changed',
    ...(createdAt === undefined ? {} : { created_at: createdAt }),
    data: { slug: 'acme-robotics' },
  });

  it('refuses a captured delivery whose created_at is more than 5 minutes old, and one from the future', async () => {
    enqueued.length = 0;
    const old = await postHex(hexEvent(at(-6 * 60_000)));
    const future = await postHex(hexEvent(at(6 * 60_000)));
    expect(old).toEqual({ status: 401, body: expect.objectContaining({ reason: 'timestamp_too_old' }) });
    expect(future).toEqual({ status: 401, body: expect.objectContaining({ reason: 'timestamp_too_new' }) });
    expect(enqueued).toEqual([]);
  });

  it('accepts a recent created_at; refuses a payload without one (a replay could not be dated)', async () => {
    enqueued.length = 0;
    expect((await postHex(hexEvent(at(-60_000)))).status).toBe(202);
    expect(await postHex(hexEvent(undefined))).toEqual({
      status: 401,
      body: expect.objectContaining({ reason: 'timestamp_missing' }),
    });
    expect(enqueued).toHaveLength(1);
  });

  it('applies the created_at window to alert.fired too (issue 26, point 3)', async () => {
    enqueued.length = 0;
    const alert = (createdAt: unknown) => ({
      id: `evt_${randomUUID()}`,
      type: 'alert.fired',
      ...(createdAt === undefined ? {} : { created_at: createdAt }),
      data: { slug: 'acme-robotics', title: 'Score fell' },
    });
    const answers = {
      old: (await postHex(alert(at(-26 * 3_600_000)))).status,
      ahead: (await postHex(alert(at(30 * 86_400_000)))).status,
      unreadable: (await postHex(alert('not a time'))).status,
      number: (await postHex(alert(1_700_000_000))).status,
      missing: (await postHex(alert(undefined))).status,
    };
    expect(answers).toEqual({ old: 401, ahead: 401, unreadable: 400, number: 400, missing: 401 });
    expect(enqueued).toEqual([]);
    const recent = at(-30_000);
    expect((await postHex(alert(recent))).status).toBe(202);
    expect(enqueued).toEqual([expect.objectContaining({ alert: { line: 'Score fell', at: recent } })]);
  });

  it('answers 400 to a created_at that is not a timestamp, and to a slug that is not one', async () => {
    enqueued.length = 0;
    expect((await postHex(hexEvent('yesterday'))).status).toBe(400);
    expect((await postHex({ ...hexEvent(at(0)), data: { slug: '..' } })).status).toBe(400);
    expect(enqueued).toEqual([]);
  });
});
