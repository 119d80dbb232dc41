import { randomBytes } from 'node:crypto';
import pino from 'pino';
import { describe, expect, it, vi } from 'vitest';
import type { AppContext } from '../src/app/context.js';
import { InstallationService } from '../src/app/installation-service.js';
import type { AppRuntime } from '../src/app/runtime.js';
import { linkIndexOf, syncRunsOf } from '../src/app/stores.js';
import { InstallationStore } from '../src/installations/store.js';
import type { InstallationStop } from '../src/pipeline/installation-stop.js';
import { PendingSlugs } from '../src/pipeline/score-changes/pending-slugs.js';
import { crmKind } from '../src/providers.js';
import { type ReportRequest, RequestStore } from '../src/requests/request-store.js';
import type { LinkIndex } from '../src/storage/link-index.js';
import { fingerprintOf, type RecordState } from '../src/storage/record-state.js';
import { RunLinks } from '../src/storage/run-links.js';
import type { SyncRuns } from '../src/storage/runs.js';
import { SecretBox } from '../src/util/secretbox.js';
import { redisWithFreshPrefixes } from './support/redis-prefixes.js';

/**
 * Removing an installation against a real Redis, under a fresh prefix per test: the installation's hash is
 * deleted once, first, so that nothing a batch still in flight writes lands after the keys are cleared.
 */

const { redis, freshPrefix } = redisWithFreshPrefixes('removal');

interface Removal {
  store: InstallationStore;
  index: LinkIndex;
  runs: SyncRuns;
  requests: RequestStore;
  service: InstallationService;
}

/** The parts of the context a token-mode removal touches; the jobs and the runtime are stand-ins. */
function removal(): Removal {
  const prefix = freshPrefix();
  const store = new InstallationStore(redis(), new SecretBox(randomBytes(32)), prefix);
  const index = linkIndexOf(redis(), store.keys);
  const runs = syncRunsOf(redis(), store.keys);
  const requests = new RequestStore(redis(), store.keys);
  const installationStop: Pick<InstallationStop, 'stop'> = { stop: async () => undefined };
  const runtime: Pick<AppRuntime, 'forget'> = { forget: () => undefined };
  const parts = {
    installations: store,
    index,
    runs,
    requests,
    installationStop,
    runtime,
    logger: pino({ level: 'silent' }),
  };
  // Removal reads nothing else of the context for a token-mode installation (nothing to revoke).
  return { store, index, runs, requests, service: new InstallationService(parts as unknown as AppContext) };
}

async function installed(store: InstallationStore, externalId = '4242'): Promise<string> {
  const installation = await store.upsert({
    crm: crmKind('hubspot'),
    externalId,
    mode: 'token',
    tokens: { accessToken: 'pat-test' },
  });
  return installation.id;
}

describe('InstallationService.remove', () => {
  it('deletes the hash once, before the index and the sync history are cleared, then every other key', async () => {
    const { store, index, runs, service } = removal();
    const id = await installed(store);
    await runs.start(id, 'initial');
    expect((await redis().keys(store.keys.instPattern(id))).length).toBeGreaterThan(0);

    const retire = vi.spyOn(store, 'retire');
    const hashWhen: Record<string, number> = {};
    const hash = store.keys.installation(id);
    const forget = index.slugs.forgetInstallation.bind(index.slugs);
    vi.spyOn(index.slugs, 'forgetInstallation').mockImplementation(async (installationId) => {
      hashWhen.index = await redis().exists(hash);
      await forget(installationId);
    });
    const removeAll = runs.removeAll.bind(runs);
    vi.spyOn(runs, 'removeAll').mockImplementation(async (installationId) => {
      hashWhen.runs = await redis().exists(hash);
      await removeAll(installationId);
    });

    const result = await service.remove(id);

    expect(result).toMatchObject({ removed: id, revocation: { outcome: 'nothing_to_revoke' } });
    // One UNLINK of the hash: the store's own removal step does not delete it a second time.
    expect(retire).toHaveBeenCalledTimes(1);
    expect(hashWhen).toEqual({ index: 0, runs: 0 });
    expect(await redis().exists(hash)).toBe(0);
    expect(await redis().keys(store.keys.instPattern(id))).toEqual([]);
    expect(await redis().sismember(store.keys.installations(), id)).toBe(0);
    expect(await store.list()).toEqual([]);
  });

  it('leaves nothing a batch still in flight writes after it: no run-links, no pending slugs', async () => {
    const { store, runs, service } = removal();
    const id = await installed(store);
    const runId = await runs.start(id, 'initial');
    const links = new RunLinks(redis(), store.keys);
    const pending = new PendingSlugs(redis(), store.keys);
    // While the installation exists both are written as ever.
    await links.add(id, runId, new Map([['101', 'acme']]));
    await pending.mark(id, 'acme', 'urgent');
    expect(await links.linksOf(id, runId)).toEqual(new Map([['101', 'acme']]));
    expect(await pending.count(id, 'urgent')).toBe(1);

    await service.remove(id);
    // The batch ends after the removal: its auto-links and the slugs it found stale arrive too late.
    await links.add(id, runId, new Map([['102', 'globex']]));
    await pending.mark(id, 'globex', 'urgent');
    await pending.mark(id, 'initech', 'hot');

    expect(await redis().keys(store.keys.instPattern(id))).toEqual([]);
    expect(await links.linksOf(id, runId)).toEqual(new Map());
    expect(await pending.take(id, 'urgent', 10)).toEqual([]);
  });
});

function linkedTo(recordId: string, slug: string): RecordState {
  return {
    recordId,
    slug,
    status: 'matched',
    score: 61,
    autoLinked: true,
    unlinkedName: null,
    review: null,
    fingerprint: fingerprintOf({ name: `Company ${recordId}`, domain: '', fields: { slug } }),
  };
}

function requestOf(installationId: string, recordId: string, submissionId: string): ReportRequest {
  return {
    installationId,
    recordId,
    submissionId,
    state: 'pending',
    requestedAt: new Date().toISOString(),
    sent: { name: `Company ${recordId}`, reference: recordId },
    answer: { id: submissionId },
  };
}

describe('removal leaves nothing of the installation in global keys (issue 26, point 10)', () => {
  it('deletes its submissions from the submission index and its number from the fan-out numbers', async () => {
    const { store, index, requests, service } = removal();
    const id = await installed(store);
    const other = await installed(store, '5151');
    // Record 101 was requested twice: its first submission is only in the global index now.
    await requests.save(requestOf(id, '101', 'sub-first'));
    await requests.save(requestOf(id, '101', 'sub-again'));
    await requests.save(requestOf(id, '102', 'sub-102'));
    await requests.save(requestOf(other, '900', 'sub-other'));
    await index.apply(id, [linkedTo('101', 'acme-robotics')]);
    await index.apply(other, [linkedTo('900', 'acme-robotics')]);
    const numbers = store.keys.slugInstallationNumbers();
    expect(await redis().hexists(numbers, `i:${id}`)).toBe(1);

    await service.remove(id);

    expect(await redis().hkeys(store.keys.requestSubmissions())).toEqual(['sub-other']);
    expect(await requests.bySubmission('sub-other')).toMatchObject({ installationId: other });
    const left = await redis().hgetall(numbers);
    expect(Object.keys(left).filter((f) => f === `i:${id}` || left[f] === id)).toEqual([]);
    expect(left[`i:${other}`]).toBeDefined();
    expect(await index.slugs.installationsForSlug('acme-robotics')).toEqual([other]);
  });

  it('an installation removed and installed again is fanned out again, whichever process links it', async () => {
    const { store, index, service } = removal();
    const elsewhere = linkIndexOf(redis(), store.keys);
    const id = await installed(store);
    await elsewhere.apply(id, [linkedTo('101', 'acme-robotics')]);
    const numbers = store.keys.slugInstallationNumbers();
    const first = await redis().hget(numbers, `i:${id}`);

    await service.remove(id);
    await installed(store);
    // Another process that linked a record of the first installation links one of the second.
    await elsewhere.apply(id, [linkedTo('101', 'globex-systems')]);

    const second = await redis().hget(numbers, `i:${id}`);
    expect(second).not.toBeNull();
    expect(second).not.toBe(first);
    expect(await index.slugs.installationsForSlug('globex-systems')).toEqual([id]);
    expect(await index.slugs.installationsForSlug('acme-robotics')).toEqual([]);
  });

  it('a batch that ends after the removal leaves no number behind', async () => {
    const { store, index, service } = removal();
    const id = await installed(store);
    await service.remove(id);
    await index.apply(id, [linkedTo('101', 'acme-robotics')]);
    const left = await redis().hgetall(store.keys.slugInstallationNumbers());
    expect(Object.keys(left).filter((f) => f === `i:${id}` || left[f] === id)).toEqual([]);
    expect(await index.slugs.installationsForSlug('acme-robotics')).toEqual([]);
  });
});
