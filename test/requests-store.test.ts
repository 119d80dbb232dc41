import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { AlertStore } from '../src/alerts/alert-store.js';
import { type ReportRequest, RequestLockedError, RequestStore } from '../src/requests/request-store.js';
import { Keys } from '../src/storage/keys.js';
import { redisUnderOwnPrefix } from './support/redis-prefixes.js';

/** The report requests and alerts stores, on the real Redis under a prefix of their own. */

const { prefix, redis } = redisUnderOwnPrefix();
const keys = new Keys(prefix);

function request(overrides: Partial<ReportRequest> = {}): ReportRequest {
  return {
    installationId: 'inst-a',
    recordId: 'r1',
    submissionId: `sub_${randomUUID()}`,
    state: 'pending',
    requestedAt: new Date().toISOString(),
    sent: { name: 'Quayside Foods', reference: 'r1' },
    answer: { id: 'x', extra: [1, 2] },
    ...overrides,
  };
}

describe('RequestStore', () => {
  it('keeps a request, finds it by record and by submission, with the answer as it came', async () => {
    const store = new RequestStore(redis, keys);
    const made = request();
    await store.save(made);
    expect(await store.pending('inst-a', 'r1')).toEqual(made);
    expect(await store.bySubmission(made.submissionId)).toEqual(made);
    expect((await store.pendingAmong('inst-a', ['r1', 'r2', 'r3'])).get('r1')?.answer).toEqual({
      id: 'x',
      extra: [1, 2],
    });
  });

  it('ends a pending request once; a later request of the record hides the older submission', async () => {
    const store = new RequestStore(redis, keys);
    const first = request({ recordId: 'r5' });
    await store.save(first);
    const linked = await store.resolve('inst-a', 'r5', 'linked', 'quayside-foods');
    expect(linked).toMatchObject({ state: 'linked', slug: 'quayside-foods' });
    expect(await store.resolve('inst-a', 'r5', 'review')).toBeNull();
    expect(await store.pending('inst-a', 'r5')).toBeNull();

    const second = request({ recordId: 'r5' });
    await store.save(second);
    expect(await store.bySubmission(first.submissionId)).toBeNull();
    expect((await store.bySubmission(second.submissionId))?.state).toBe('pending');
    expect((await store.list('inst-a')).map((r) => r.submissionId)).toContain(second.submissionId);
  });

  it('keeps submission ids per report-service key: an id two accounts share resolves neither request', async () => {
    const store = new RequestStore(redis, keys);
    const shared = `sub_${randomUUID()}`;
    const mine = request({
      installationId: 'inst-k1',
      recordId: 'r1',
      submissionId: shared,
      keyIdentity: 'key-one',
    });
    await store.save(mine);
    expect(await store.bySubmission(shared)).toMatchObject({ installationId: 'inst-k1', recordId: 'r1' });

    // Another tenant's account gives the same id: its completion must not resolve the first tenant's request.
    const theirs = request({
      installationId: 'inst-k2',
      recordId: 'r7',
      submissionId: shared,
      keyIdentity: 'key-two',
    });
    await store.save(theirs);
    expect(await store.bySubmission(shared)).toBeNull();
    expect(await store.pending('inst-k1', 'r1')).toEqual(mine);
    expect(await store.pending('inst-k2', 'r7')).toEqual(theirs);
    expect(await redis.hexists(keys.requestSubmissions(), shared)).toBe(0);

    // Removing one installation takes its entry out of its key's index: the id is the other's alone again.
    await store.forget('inst-k2', ['r7']);
    await store.forgetInstallation('inst-k2');
    expect(await store.bySubmission(shared)).toEqual(mine);
  });

  it('still resolves a submission the one index of before holds (written before ids were kept per key)', async () => {
    const store = new RequestStore(redis, keys);
    const old = request({ installationId: 'inst-old', recordId: 'r3' });
    // As the code before wrote it: the request without a key, its id in the deployment-wide index.
    await redis.hset(
      keys.requestSubmissions(),
      old.submissionId,
      JSON.stringify({ installationId: old.installationId, recordId: old.recordId }),
    );
    await redis.hset(keys.requests(old.installationId), old.recordId, JSON.stringify(old));
    expect(await store.bySubmission(old.submissionId)).toEqual(old);
  });

  it('lets one maker at a time hold a record', async () => {
    const store = new RequestStore(redis, keys);
    let release: () => void = () => {};
    const holding = store.exclusive('inst-a', 'r9', () => new Promise<void>((r) => (release = r)));
    await expect(store.exclusive('inst-a', 'r9', async () => 'second')).rejects.toBeInstanceOf(
      RequestLockedError,
    );
    release();
    await holding;
    expect(await store.exclusive('inst-a', 'r9', async () => 'after')).toBe('after');
  });
});

describe('AlertStore', () => {
  it('keeps the newest alert per slug, whatever order they arrive in', async () => {
    const alerts = new AlertStore(redis, keys);
    expect(await alerts.record('s1', { line: 'new', at: '2026-11-23T10:00:00Z', eventId: 'e2' })).toBe(true);
    expect(await alerts.record('s1', { line: 'old', at: '2026-11-23T09:00:00Z', eventId: 'e1' })).toBe(false);
    expect((await alerts.latest(['s1', 's2'])).get('s1')).toEqual({
      line: 'new',
      at: '2026-11-23T10:00:00.000Z',
      eventId: 'e2',
    });
    expect((await alerts.latest(['s2'])).size).toBe(0);
  });

  it('claims an activity once per event and record, and gives a claim back', async () => {
    const alerts = new AlertStore(redis, keys);
    expect(await alerts.claimActivity('inst-a', 'e1', 'r1')).toBe(true);
    expect(await alerts.claimActivity('inst-a', 'e1', 'r1')).toBe(false);
    expect(await alerts.claimActivity('inst-a', 'e2', 'r1')).toBe(true);
    await alerts.releaseActivity('inst-a', 'e1', 'r1');
    expect(await alerts.claimActivity('inst-a', 'e1', 'r1')).toBe(true);
  });
});
