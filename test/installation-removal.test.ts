import { randomBytes } from 'node:crypto';
import pino from 'pino';
import { describe, expect, it, vi } from 'vitest';
import type { AppContext } from '../src/app/context.js';
import { InstallationService } from '../src/app/installation-service.js';
import type { AppRuntime } from '../src/app/runtime.js';
import { InstallationStore } from '../src/installations/store.js';
import { LinkIndex } from '../src/pipeline/link-index.js';
import { PendingSlugs } from '../src/pipeline/pending-slugs.js';
import type { Pipeline } from '../src/pipeline/pipeline.js';
import { RunLinks } from '../src/pipeline/run-links.js';
import { SyncRuns } from '../src/pipeline/runs.js';
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
  service: InstallationService;
}

/** The parts of the context a token-mode removal touches; the jobs and the runtime are stand-ins. */
function removal(): Removal {
  const prefix = freshPrefix();
  const store = new InstallationStore(redis(), new SecretBox(randomBytes(32)), prefix);
  const index = new LinkIndex(redis(), store.keys);
  const runs = new SyncRuns(redis(), store.keys);
  const pipeline: Pick<Pipeline, 'stopInstallation'> = { stopInstallation: async () => undefined };
  const runtime: Pick<AppRuntime, 'forget'> = { forget: () => undefined };
  const parts = { installations: store, index, runs, pipeline, runtime, logger: pino({ level: 'silent' }) };
  // Removal reads nothing else of the context for a token-mode installation (nothing to revoke).
  return { store, index, runs, service: new InstallationService(parts as unknown as AppContext) };
}

async function installed(store: InstallationStore): Promise<string> {
  const installation = await store.upsert({
    crm: 'hubspot',
    externalId: '4242',
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
    const forget = index.forgetInstallation.bind(index);
    vi.spyOn(index, 'forgetInstallation').mockImplementation(async (installationId) => {
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
