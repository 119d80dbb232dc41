import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalSystem } from '../local/system.js';
import { scanTargets } from '../src/redis.js';
import { staleRecords } from './support/end-state.js';
import { startTestSystem, stopTestSystem } from './support/local-system.js';
import { LocalRedisCluster } from './support/redis-cluster.js';
import { keysWithPrefix, runEnded } from './support/system-state.js';

/**
 * A managed Redis Cluster wants a password and TLS: the nodes here take only TLS connections (client port,
 * cluster bus, replication) with a certificate from a CA of the test's own, and require a password.
 * REDIS_CLUSTER_PASSWORD, REDIS_CLUSTER_TLS and REDIS_CLUSTER_TLS_CA_FILE reach every node the connector
 * discovers; without them start-up fails and says why.
 */

let cluster: LocalRedisCluster;
const password = randomBytes(18).toString('base64url');

beforeAll(async () => {
  cluster = await LocalRedisCluster.start({ masters: 3, password, tls: true });
}, 120_000);

afterAll(async () => {
  await cluster?.stop();
});

const securedEnv = () => ({
  REDIS_CLUSTER_NODES: cluster.nodesEnv,
  REDIS_CLUSTER_PASSWORD: password,
  REDIS_CLUSTER_TLS: 'true',
  REDIS_CLUSTER_TLS_CA_FILE: cluster.caFile,
});

describe('on a Redis Cluster that requires a password and TLS', () => {
  it('backfills with the password and the CA: records linked and current, state on every master', async () => {
    let system: LocalSystem | undefined;
    try {
      system = await startTestSystem({ companies: 60, logLevel: 'silent', env: securedEnv() });
      const run = await runEnded(system);
      expect(run.state).toBe('done');
      const linked = system.recordIds.filter(
        (id) => system!.hubspot.getCompany(id)?.properties.report_match_status === 'matched',
      );
      expect(linked.length).toBeGreaterThan(10);
      expect(staleRecords(system)).toEqual([]);
      const masters = await scanTargets(system.ctx.redis);
      expect(masters).toHaveLength(3);
      const keys = await keysWithPrefix(system.ctx.redis, system.ctx.config.redisPrefix);
      expect(keys.length).toBeGreaterThan(0);
    } finally {
      await stopTestSystem(system);
    }
  }, 180_000);

  it.each([
    ['without the password', { REDIS_CLUSTER_PASSWORD: '' }, /NOAUTH|WRONGPASS|Authentication required/i],
    ['with a wrong password', { REDIS_CLUSTER_PASSWORD: 'not-the-password' }, /WRONGPASS|invalid/i],
    ['without the CA', { REDIS_CLUSTER_TLS_CA_FILE: '' }, /certificate.*REDIS_CLUSTER_TLS_CA_FILE/i],
  ])(
    'refuses to start %s and says why',
    async (_what, change, why) => {
      const started = startTestSystem({
        companies: 5,
        logLevel: 'silent',
        env: { ...securedEnv(), ...change },
      });
      const error = await started.then(
        async (system) => {
          await stopTestSystem(system);
          return null;
        },
        (err: unknown) => err as Error,
      );
      expect(error?.message).toMatch(/Redis Cluster does not answer/);
      expect(error?.message).toMatch(why);
      expect(error?.message).not.toContain(password);
    },
    60_000,
  );
});
