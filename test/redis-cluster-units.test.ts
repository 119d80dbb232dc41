import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';
import { closeRedis, createRedis, waitForRedis } from '../src/redis.js';
import { isRedisUnavailable } from '../src/redis-availability.js';
import { gateKeys, Keys } from '../src/storage/keys.js';
import { REDIS_URL } from './support/redis-url.js';

/** REDIS_CLUSTER_NODES and the hash tags that keep what one script or transaction touches in one slot. */

const base = {
  ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64'),
  ADMIN_TOKEN: 'an-admin-token-of-some-length',
  REPORTS_API_URL: 'http://127.0.0.1:4010/api',
};
const load = (extra: Record<string, string>) => loadConfig({ ...base, ...extra }, { envFile: null });

/** What Redis Cluster hashes: the text of the first non-empty `{…}`, or the whole key (cluster spec). */
function hashed(key: string): string {
  const open = key.indexOf('{');
  if (open < 0) return key;
  const close = key.indexOf('}', open + 1);
  if (close < 0 || close === open + 1) return key;
  return key.slice(open + 1, close);
}

describe('REDIS_CLUSTER_NODES', () => {
  it('is off by default and when empty', () => {
    expect(load({}).redisClusterNodes).toBeNull();
    expect(load({ REDIS_CLUSTER_NODES: ' ' }).redisClusterNodes).toBeNull();
  });

  it('takes host:port pairs, IPv6 in brackets', () => {
    expect(
      load({ REDIS_CLUSTER_NODES: '10.0.0.5:7000, redis-b.internal:7001,[::1]:7002' }).redisClusterNodes,
    ).toEqual([
      { host: '10.0.0.5', port: 7000 },
      { host: 'redis-b.internal', port: 7001 },
      { host: '::1', port: 7002 },
    ]);
  });

  it('refuses anything else with a message naming the variable', () => {
    for (const bad of ['10.0.0.5', 'redis://10.0.0.5:7000', '10.0.0.5:0', '10.0.0.5:70000', 'a:1,,b']) {
      try {
        const nodes = load({ REDIS_CLUSTER_NODES: bad }).redisClusterNodes;
        // 'a:1,,b' has an empty entry, skipped, and 'b' without a port: refused.
        expect.unreachable(`${bad} was taken as ${JSON.stringify(nodes)}`);
      } catch (err) {
        expect(err, bad).toBeInstanceOf(ConfigError);
        expect((err as ConfigError).variable).toBe('REDIS_CLUSTER_NODES');
      }
    }
  });
});

describe('REDIS_CLUSTER_PASSWORD, _USERNAME, _TLS, _TLS_CA_FILE', () => {
  it('are off by default', () => {
    expect(load({}).redisClusterAuth).toEqual({ username: null, password: null, tls: false, tlsCa: null });
  });

  it('take a user, a password and TLS; a CA file implies TLS and is read at start-up', () => {
    const dir = mkdtempSync(join(tmpdir(), 'rc-ca-'));
    const ca = join(dir, 'ca.pem');
    writeFileSync(ca, '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n');
    try {
      expect(
        load({ REDIS_CLUSTER_USERNAME: 'app', REDIS_CLUSTER_PASSWORD: 's3cret', REDIS_CLUSTER_TLS: 'true' })
          .redisClusterAuth,
      ).toEqual({ username: 'app', password: 's3cret', tls: true, tlsCa: null });
      const withCa = load({ REDIS_CLUSTER_TLS_CA_FILE: ca }).redisClusterAuth;
      expect(withCa.tls).toBe(true);
      expect(withCa.tlsCa).toContain('BEGIN CERTIFICATE');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses a TLS value other than true or false, and a CA file that is missing or not PEM', () => {
    const variableOf = (extra: Record<string, string>) => {
      try {
        load(extra);
        return null;
      } catch (err) {
        return err instanceof ConfigError ? err.variable : String(err);
      }
    };
    expect(variableOf({ REDIS_CLUSTER_TLS: 'yes' })).toBe('REDIS_CLUSTER_TLS');
    expect(variableOf({ REDIS_CLUSTER_TLS_CA_FILE: '/nonexistent/ca.pem' })).toBe(
      'REDIS_CLUSTER_TLS_CA_FILE',
    );
    const dir = mkdtempSync(join(tmpdir(), 'rc-ca-'));
    try {
      writeFileSync(join(dir, 'key.txt'), 'not a certificate\n');
      expect(variableOf({ REDIS_CLUSTER_TLS_CA_FILE: join(dir, 'key.txt') })).toBe(
        'REDIS_CLUSTER_TLS_CA_FILE',
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('hash tags', () => {
  const keys = new Keys('rc');

  it("puts every key of one installation, its hash included, in the installation's slot", () => {
    const id = 'hubspot-123';
    const all = [
      keys.installation(id),
      keys.recordStates(id),
      `${keys.recordStates(id)}:17`,
      `${keys.recordStates(id)}:big`,
      ...keys.legacyPlaceKeys(id),
      keys.slugRecords(id),
      keys.review(id),
      keys.reviewCandidates(id),
      keys.rejected(id),
      keys.pollCursor(id),
      keys.changeStreamLease(id),
      keys.changeStreamState(id),
      keys.recordLock(id, '7'),
      keys.recordLock(id, '8'),
      keys.runs(id),
      keys.activeRuns(id),
      keys.runLinks(id, 'run-1'),
      keys.requests(id),
      keys.requestLock(id, '7'),
      keys.decisions(id),
      keys.alertActivities(id, 'evt'),
      keys.refreshLock(id),
      keys.refreshCooldown(id),
      ...Object.values(gateKeys(keys.crmGate(id))),
    ];
    expect(new Set(all.map(hashed))).toEqual(new Set([id]));
    expect(hashed(keys.recordStates('salesforce-00D1'))).not.toBe(hashed(keys.recordStates(id)));
    // The removal pattern still matches them all.
    expect(keys.instPattern(id)).toBe(`${keys.inst(id)}:*`);
  });

  it('puts the event log, duplicate marks and score-change inbox in one slot (one script accepts an event)', () => {
    const all = [
      keys.events(),
      keys.eventSeen('reports', 'msg_1'),
      keys.eventSeen('hubspot', '42'),
      keys.scoreInbox(),
      keys.scoreInboxOrder(),
      keys.scoreInboxDraining(),
      keys.scoreInboxKick(),
      keys.slugHeat('acme'),
    ];
    expect(new Set(all.map(hashed)).size).toBe(1);
  });

  it("puts one run's keys in one slot, each rate gate's two keys together, each queue apart", () => {
    const run = [keys.run('r1'), keys.runBatches('r1'), keys.runCached('r1')];
    expect(new Set(run.map(hashed))).toEqual(new Set(['r1']));
    const gate = gateKeys(keys.reportsGate('abc'));
    expect(hashed(gate.tat)).toBe(hashed(gate.pause));
    // The learnt rate too: the gate's scripts read and write all three together.
    expect(hashed(gate.rate)).toBe(hashed(gate.tat));
    const queues = ['backfill', 'realtime', 'schedule'].map((q) =>
      hashed(`${keys.queuePrefix(q)}:${q}:wait`),
    );
    expect(new Set(queues).size).toBe(3);
    // Everything stays under the deployment's prefix (clean-up, `everything()`).
    for (const k of [...run, gate.tat, keys.queuePrefix('backfill'), keys.events()]) {
      expect(k.startsWith('rc:')).toBe(true);
    }
  });
});

describe('the report cache on a cluster', () => {
  it("spreads one key's reads and searches over at least 16 hash tags, an entry and its fill lock in one slot", () => {
    const keys = new Keys('rc');
    const slugs = Array.from({ length: 500 }, (_, i) => `company-${i}`);
    const reads = new Set(slugs.map((s) => hashed(keys.reportCached('key1', s))));
    const searches = new Set(slugs.map((s) => hashed(keys.searchCached('key1', s, 10))));
    expect(reads.size).toBeGreaterThanOrEqual(16);
    expect(searches.size).toBeGreaterThanOrEqual(16);
    for (const s of slugs.slice(0, 50)) {
      expect(hashed(keys.reportCacheFill('key1', s))).toBe(hashed(keys.reportCached('key1', s)));
    }
    // Another key's entries never share a tag with this key's: no key reads through another's partition.
    const other = new Set(slugs.map((s) => hashed(keys.reportCached('key2', s))));
    expect([...other].filter((t) => reads.has(t))).toEqual([]);
    // Nothing per run or per job in them.
    expect(keys.reportCached('key1', 'acme')).not.toMatch(/run|ev-/);
  });
});

describe('a cluster failing over', () => {
  it("counts as Redis being away (a webhook answers 503 and is sent again), not as the request's fault", async () => {
    const redis = createRedis(REDIS_URL, 'producer');
    try {
      await waitForRedis(redis);
      for (const message of [
        'CLUSTERDOWN The cluster is down',
        'TRYAGAIN Multiple keys request during rehashing of slot',
        'Too many Cluster redirections. Last error: Error: Connection is closed.',
        'Failed to refresh slots cache.',
      ]) {
        expect(isRedisUnavailable(new Error(message), redis), message).toBe(true);
      }
      expect(isRedisUnavailable(new Error('WRONGTYPE Operation against a key'), redis)).toBe(false);
    } finally {
      await closeRedis(redis);
    }
  });
});
