import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { changeSourceOf } from '../src/app/change-source.js';
import { type AppContext, createAppContext } from '../src/app/context.js';
import { loadConfig } from '../src/config.js';
import type { Installation } from '../src/installations/store.js';
import { createLogger } from '../src/log.js';
import { crmKind } from '../src/providers.js';
import { deleteKeysWithPrefix, waitForRedis } from '../src/redis.js';
import { REDIS_URL } from './support/redis-url.js';

/**
 * Where an installation's changes come from, as decided from what Redis holds (the stream's lease and its
 * recorded state, the poll cursor) and the configuration: each reason an admin may read, on the real Redis.
 * The local system tests (salesforce-change-source-system.test.ts) show the same through a running stream.
 */

const prefix = `rc-test-change-source-${randomUUID().slice(0, 8)}`;
let ctx: AppContext;
let salesforce: Installation;

function lease(id: string): string {
  return ctx.keys.changeStreamLease(id);
}

beforeAll(async () => {
  const config = loadConfig(
    {
      REDIS_URL,
      REDIS_PREFIX: prefix,
      REPORTS_API_URL: 'http://127.0.0.1:9/api',
      ENCRYPTION_KEY: randomBytes(32).toString('base64'),
      ADMIN_TOKEN: 'an-admin-token-for-the-change-source-tests',
      SALESFORCE_CHANGE_EVENTS: 'true',
      SALESFORCE_POLL_SECONDS: '120',
    },
    { envFile: null },
  );
  ctx = createAppContext(config, { logger: createLogger('silent') });
  await waitForRedis(ctx.redis);
  salesforce = await ctx.installations.upsert({
    crm: crmKind('salesforce'),
    externalId: '00D000000000001AAA',
    mode: 'token',
    tokens: { accessToken: 'unused' },
    instanceUrl: 'https://example.my.salesforce.com',
  });
});

afterAll(async () => {
  await ctx.close();
  await deleteKeysWithPrefix(ctx.config, prefix);
});

describe('where an installation’s changes come from', () => {
  it('a HubSpot portal: by its webhooks, with nothing read', async () => {
    const hubspot = await ctx.installations.upsert({
      crm: crmKind('hubspot'),
      externalId: '424242',
      mode: 'token',
      tokens: { accessToken: 'unused' },
    });
    const source = await changeSourceOf(ctx, hubspot);
    expect(source).toMatchObject({ mode: 'webhooks', reason: 'webhooks' });
    expect(source.detail).toBe("Changes arrive by HubSpot's webhooks, within seconds.");
  });

  it('a Salesforce org: the poll until its first poll, then until a worker holds the stream', async () => {
    const first = await changeSourceOf(ctx, salesforce);
    expect(first).toMatchObject({ mode: 'poll', reason: 'first-poll', pollSeconds: 120 });
    expect(first.detail).toBe(
      'Waiting for the first poll: the Change Data Capture stream starts after it. Changes arrive by the poll, every 120 s.',
    );
    await ctx.index.pollCursors.set(salesforce.id, { cursor: 'c1', since: Date.now() });
    const polled = await changeSourceOf(ctx, salesforce);
    expect(polled.reason).toBe('no-holder');
    expect(polled.detail).toMatch(/^No worker holds the Change Data Capture stream: no worker is running/);
  });

  it('streams only while the lease is held and the stream says it streams; a stale holder writes nothing', async () => {
    const states = ctx.stores.streamStates;
    await ctx.redis.set(lease(salesforce.id), 'holder-a', 'PX', 60_000);
    expect((await changeSourceOf(ctx, salesforce)).reason).toBe('starting');
    const at = Date.now() - 5_000;
    const detail = 'Account changes arrive by Change Data Capture';
    expect(await states.write(salesforce.id, 'holder-a', { mode: 'stream', detail }, { now: at })).toBe(
      'set',
    );
    const streaming = await changeSourceOf(ctx, salesforce);
    expect(streaming).toMatchObject({
      mode: 'stream',
      reason: 'streaming',
      since: new Date(at).toISOString(),
    });
    expect(await states.healthy(salesforce.id)).toBe(true);
    // Another process's token: the lease is not its own, and what it says is not recorded.
    expect(await states.write(salesforce.id, 'holder-b', { mode: 'poll', detail: 'x' })).toBe('lost');
    // Saying it streams again keeps the time it began.
    await states.write(salesforce.id, 'holder-a', { mode: 'stream', detail });
    expect((await changeSourceOf(ctx, salesforce)).since).toBe(new Date(at).toISOString());

    // The lease lapsed (a killed worker): the recorded 'stream' no longer counts.
    await ctx.redis.del(lease(salesforce.id));
    expect(await states.healthy(salesforce.id)).toBe(false);
    const lapsed = await changeSourceOf(ctx, salesforce);
    expect(lapsed).toMatchObject({ mode: 'poll', reason: 'no-holder', since: null });
    expect(lapsed.detail).toContain(`last recorded `);
  });

  it('the org without Change Data Capture, a reconnection, a stream given back: each with its reason', async () => {
    const states = ctx.stores.streamStates;
    const id = salesforce.id;
    await ctx.redis.set(lease(id), 'holder-a', 'PX', 60_000);
    const unavailable = 'Change Data Capture is not available in this org (Account not selected for it)';
    await states.write(id, 'holder-a', { mode: 'poll', reason: 'unavailable', detail: unavailable });
    const shown = await changeSourceOf(ctx, salesforce);
    expect(shown).toMatchObject({ mode: 'poll', reason: 'unavailable' });
    expect(shown.detail).toBe(`${unavailable}. Changes arrive by the poll, every 120 s.`);
    expect(await states.healthy(id)).toBe(false);

    await states.write(id, 'holder-a', { mode: 'poll', reason: 'reconnecting', detail: 'Reconnecting' });
    expect((await changeSourceOf(ctx, salesforce)).reason).toBe('reconnecting');

    const release = await states.write(
      id,
      'holder-a',
      { mode: 'poll', reason: 'ended', detail: 'The worker holding the stream stopped' },
      { release: true },
    );
    expect(release).toBe('set');
    expect(await ctx.redis.exists(lease(id))).toBe(0);
    const released = await changeSourceOf(ctx, salesforce);
    expect(released.reason).toBe('no-holder');
    expect(released.detail).toContain('The worker holding the stream stopped');
  });

  it('switched off: says which variable, whatever was recorded before', async () => {
    const off = {
      ...ctx,
      config: { ...ctx.config, salesforce: { ...ctx.config.salesforce, changeEvents: false } },
    };
    const shown = await changeSourceOf(off, salesforce);
    expect(shown).toMatchObject({ mode: 'poll', reason: 'switched-off' });
    expect(shown.detail).toBe(
      'Change Data Capture is switched off (SALESFORCE_CHANGE_EVENTS is not set to true). Changes arrive by the poll, every 120 s.',
    );
  });

  it('a disconnected installation has no stream; a removed one gets no state written back', async () => {
    await ctx.installations.setStatus(salesforce.id, 'disconnected', 'refused');
    const disconnected = await ctx.installations.get(salesforce.id);
    expect((await changeSourceOf(ctx, disconnected!)).reason).toBe('not-connected');

    await ctx.redis.set(lease(salesforce.id), 'holder-a', 'PX', 60_000);
    await ctx.installations.retire(salesforce.id);
    await ctx.installations.remove(salesforce.id);
    const write = await ctx.stores.streamStates.write(salesforce.id, 'holder-a', {
      mode: 'stream',
      detail: 'x',
    });
    expect(write).toBe('gone');
    expect(await ctx.redis.exists(ctx.keys.changeStreamState(salesforce.id))).toBe(0);
    await ctx.redis.del(lease(salesforce.id));
  });
});
