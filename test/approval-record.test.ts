import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { isLetIn } from '../src/installations/let-in.js';
import { InstallationStore } from '../src/installations/store.js';
import { recordApprovalsBefore } from '../src/migrations/002-approvals-recorded.js';
import { crmKind } from '../src/providers.js';
import { SecretBox } from '../src/util/secretbox.js';
import { redisWithFreshPrefixes } from './support/redis-prefixes.js';

/** Issue 26, point 1: the store keeps "let in" as a fact; statuses and reinstalls never create it. */

const { redis, freshPrefix } = redisWithFreshPrefixes('approval');

function storeOf(prefix: string): InstallationStore {
  return new InstallationStore(redis(), new SecretBox(randomBytes(32)), prefix);
}

const tokens = { accessToken: 'at', refreshToken: 'rt' };

describe('the installation store', () => {
  it('keeps a never-approved installation pending whatever status is set, and through a reinstall', async () => {
    const store = storeOf(freshPrefix());
    const first = await store.upsert({ crm: crmKind('hubspot'), externalId: '101', mode: 'oauth', tokens });
    expect(first.status).toBe('pending');
    await store.setStatus(first.id, 'disconnected', 'the refresh token was refused');
    expect(await store.get(first.id)).toMatchObject({
      status: 'pending',
      statusReason: 'the refresh token was refused',
    });
    await store.setStatus(first.id, 'key_invalid', 'key refused');
    expect((await store.get(first.id))?.status).toBe('pending');
    const again = await store.upsert({ crm: crmKind('hubspot'), externalId: '101', mode: 'oauth', tokens });
    expect(again.status).toBe('pending');
    expect(isLetIn(again)).toBe(false);
  });

  it('lets in once: a second approval is refused, and a let-in installation reconnects connected', async () => {
    const store = storeOf(freshPrefix());
    const { id } = await store.upsert({
      crm: crmKind('salesforce'),
      externalId: '00D1',
      mode: 'oauth',
      tokens,
    });
    const both = await Promise.all([store.approve(id, 'admin'), store.approve(id, 'own_key')]);
    expect(both.filter(Boolean)).toHaveLength(1);
    expect(await store.approve(id, 'admin')).toBe(false);
    await store.setStatus(id, 'disconnected', 'refused');
    expect((await store.get(id))?.status).toBe('disconnected');
    const back = await store.upsert({
      crm: crmKind('salesforce'),
      externalId: '00D1',
      mode: 'oauth',
      tokens,
    });
    expect(back.status).toBe('connected');
    expect(await store.approve('salesforce-nope', 'admin')).toBe(false);
  });
});

describe('start-up upgrade of installations written before approvals were recorded', () => {
  it('records running ones as let in before, keeps never-approved ones pending', async () => {
    const prefix = freshPrefix();
    const store = storeOf(prefix);
    // Hashes as the main before this change wrote them: no approvedBy on a connected install.
    const made: Record<string, string> = {};
    for (const [externalId, mode, status] of [
      ['1', 'oauth', 'connected'],
      ['2', 'oauth', 'key_invalid'],
      ['3', 'oauth', 'disconnected'],
      ['4', 'oauth', 'pending'],
      ['5', 'token', 'disconnected'],
    ] as const) {
      const saved = await store.upsert({ crm: crmKind('hubspot'), externalId, mode, tokens });
      await redis().hdel(store.keys.installation(saved.id), 'approvedBy', 'approvedAt');
      await redis().hset(store.keys.installation(saved.id), { status });
      made[externalId] = saved.id;
    }
    const done = await recordApprovalsBefore(store);
    expect(Object.fromEntries(done.map((d) => [d.installationId, d.outcome]))).toEqual({
      [made['1']!]: 'recorded_before',
      [made['2']!]: 'recorded_before',
      [made['3']!]: 'kept_pending',
      [made['5']!]: 'recorded_before',
    });
    const after = Object.fromEntries(
      await Promise.all(
        Object.entries(made).map(async ([k, id]) => {
          const i = await store.get(id);
          return [k, { status: i?.status, approvedBy: i?.approvedBy }];
        }),
      ),
    );
    expect(after).toEqual({
      '1': { status: 'connected', approvedBy: 'recorded_before' },
      '2': { status: 'key_invalid', approvedBy: 'recorded_before' },
      '3': { status: 'pending', approvedBy: undefined },
      '4': { status: 'pending', approvedBy: undefined },
      '5': { status: 'disconnected', approvedBy: 'recorded_before' },
    });
    expect(await recordApprovalsBefore(store)).toEqual([]);
  });
});
