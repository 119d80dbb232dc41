import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalCrmRecord, LocalSystem } from '../local/system.js';
import { PRODUCER_COMMAND_TIMEOUT_MS } from '../src/redis.js';
import { hubspotSlugEvent } from './support/hubspot-events.js';
import { startTestSystem, stopTestSystem } from './support/local-system.js';
import { measured } from './support/measured.js';
import { OwnRedisServer } from './support/own-redis.js';
import { realtimeIdle } from './support/realtime-idle.js';
import { LocalRedisCluster } from './support/redis-cluster.js';
import { postSignedEvent, signedHeaders } from './support/report-webhooks.js';
import { SwallowingProxy } from './support/swallowing-proxy.js';
import { runEnded } from './support/system-state.js';
import { waitFor } from './support/wait.js';

/**
 * Issue 26, point 4: a Redis that does not answer (CLIENT PAUSE WRITE; a network that swallows packets) never
 * holds a webhook: `/webhooks/reports` (the direct path and the Express route) and `/webhooks/hubspot` answer
 * 503 within 2 s, on one Redis and on a cluster. Once Redis answers again, the sender's retries are taken in
 * and every event, those acknowledged before the hang and those refused during it, is applied exactly once,
 * including those whose commands timed out on our side and ran on Redis when the pause ended (the pause
 * outlasts the producer connections' command timeout). Each Redis here is the test's own.
 */

const BOUND_MS = 2_000;
/**
 * A pause outlasting a producer's command timeout: the commands sent during it time out on our side, and run
 * on Redis when it ends.
 */
const PAUSE_MS = PRODUCER_COMMAND_TIMEOUT_MS + 1_500;
const REALTIME_MS = 30_000;

interface Timed {
  status: number;
  ms: number;
}

async function timed(send: () => Promise<{ status: number }>): Promise<Timed> {
  const started = Date.now();
  try {
    return { status: (await send()).status, ms: Date.now() - started };
  } catch {
    return { status: 0, ms: Date.now() - started };
  }
}

interface Event {
  id: string;
  body: string;
  /** `/webhooks/reports` (the direct path) or `/webhooks/reports/` (left to Express). */
  path: string;
}

function reportEvent(type: string, data: Record<string, unknown>, path = '/webhooks/reports'): Event {
  const id = `evt_${randomUUID()}`;
  return { id, path, body: JSON.stringify({ id, type, created_at: new Date().toISOString(), data }) };
}

/** What one scenario sends and checks, on a system whose Redis the scenario hangs and resumes. */
class Scenario {
  private readonly pool: LocalCrmRecord[];
  private nextHubSpotEventId = 770_000_001;

  constructor(private readonly system: LocalSystem) {
    // Linked records, one report each, shared by no other scenario's events.
    const seen = new Set<string>();
    this.pool = system.recordIds
      .map((id) => system.crm.record(id)!)
      .filter((r) => {
        if (r.status !== 'matched' || r.linkSource !== 'auto' || !r.slug || seen.has(r.slug)) return false;
        seen.add(r.slug);
        return true;
      });
  }

  take(): LocalCrmRecord {
    const record = this.pool.shift();
    if (!record) throw new Error('no linked record left for the scenario');
    return record;
  }

  post(event: Event, signal?: AbortSignal): Promise<Response> {
    const secret = this.system.ctx.config.reports.webhookSecrets[0]!;
    const url = `${this.system.appUrl}${event.path}`;
    return signal
      ? fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...signed(secret, event) },
          body: event.body,
          signal,
        })
      : postSignedEvent(url, secret, event.body, { id: event.id });
  }

  hubspotSlugEvent(recordId: string, slug: string): Record<string, unknown> {
    return hubspotSlugEvent(this.nextHubSpotEventId++, this.system.hubspot.portalId, recordId, slug);
  }

  /**
   * Sends an alert acknowledged before the hang, then during it: a score change, an alert on the direct path,
   * an alert through Express, the earlier alert again, and a HubSpot slug change. Every answer within 2 s;
   * then `resume`, the sender's retries until 2xx, and each event applied once.
   */
  async run(name: string, hang: () => Promise<void>, resume: () => Promise<void>): Promise<void> {
    const { system } = this;
    const [early, scored, direct, viaExpress, personal, other] = [
      this.take(),
      this.take(),
      this.take(),
      this.take(),
      this.take(),
      this.take(),
    ];
    const alert = (record: LocalCrmRecord, path?: string) =>
      reportEvent('alert.fired', { slug: record.slug, title: `Alert ${randomUUID().slice(0, 8)}` }, path);
    const before = alert(early!);
    expect((await this.post(before)).status).toBe(202);

    const directAlert = alert(direct!);
    const expressAlert = alert(viaExpress!, '/webhooks/reports/');
    const during: Event[] = [reportEvent('score.changed', { slug: scored!.slug }), directAlert, expressAlert];
    // A person's change in HubSpot, told by a signed event.
    await system.hubspot.setCompanyProperty(personal!.id, 'report_slug', other!.slug!);
    const hubspotEvent = this.hubspotSlugEvent(personal!.id, other!.slug!);
    const decisionsBefore = await system.ctx.decisions.count(system.installationId);

    await hang();
    let answers: Record<string, Timed>;
    try {
      const entries = await Promise.all([
        ...[...during, before].map(
          async (event, i) =>
            [
              `${i === during.length ? 'again' : event.path}-${i}`,
              await timed(() => this.post(event, AbortSignal.timeout(8_000))),
            ] as const,
        ),
        timed(() => system.hubspot.notify([hubspotEvent])).then((t) => ['hubspot', t] as const),
      ]);
      answers = Object.fromEntries(entries);
    } finally {
      await resume();
    }
    measured(`redis-hung-webhooks-${name}`, answers);
    for (const [what, answer] of Object.entries(answers)) {
      expect(answer.ms, `${what}: ${answer.status} after ${answer.ms} ms`).toBeLessThan(BOUND_MS);
    }
    for (const [what, answer] of Object.entries(answers)) {
      if (what.startsWith('again')) expect([200, 503], what).toContain(answer.status);
      else expect(answer.status, what).toBe(503);
    }

    // The senders retry until acknowledged.
    for (const event of [...during, before]) {
      await waitFor(
        `${event.id} acknowledged`,
        async () => ((await this.post(event)).ok ? true : undefined),
        REALTIME_MS,
        200,
      );
    }
    await waitFor(
      'the HubSpot event acknowledged',
      async () => ((await system.hubspot.notify([hubspotEvent])).status === 204 ? true : undefined),
      REALTIME_MS,
      200,
    );

    // Applied: each alert on its records, the person's link theirs; then, with nothing left to run, once.
    await waitFor(
      'the alerts and the person’s link applied',
      () =>
        [early, direct, viaExpress].every((r) => system.crm.record(r!.id)?.alert) &&
        system.crm.record(personal!.id)?.linkSource === 'person'
          ? true
          : undefined,
      REALTIME_MS,
      100,
    );
    await realtimeIdle(this.system, { looks: 3, timeoutMs: REALTIME_MS, everyMs: 100 });
    const log = await system.ctx.events.recent(500);
    for (const event of [before, ...during]) {
      expect(log.filter((e) => e.id === event.id).length, event.id).toBe(1);
    }
    for (const [record, event] of [
      [early, before],
      [direct, directAlert],
      [viaExpress, expressAlert],
    ] as const) {
      const title = (JSON.parse(event.body) as { data: { title: string } }).data.title;
      expect(system.crm.record(record!.id)?.alert).toContain(title);
    }
    expect(await system.ctx.decisions.count(system.installationId)).toBe(decisionsBefore + 1);
    expect(system.crm.record(personal!.id)).toMatchObject({ slug: other!.slug, linkSource: 'person' });
  }
}

/** The headers postSignedEvent sends, for a request with an abort signal. */
function signed(secret: string, event: Event): Record<string, string> {
  return signedHeaders(secret, event.body, event.id);
}

describe('webhooks on one hung Redis', () => {
  const redisServer = new OwnRedisServer();
  let proxy: SwallowingProxy;
  let direct: Redis;
  let system: LocalSystem;
  let scenario: Scenario;

  beforeAll(async () => {
    await redisServer.start();
    proxy = new SwallowingProxy({ host: '127.0.0.1', port: redisServer.port });
    await proxy.listen();
    direct = new Redis(redisServer.url);
    system = await startTestSystem({
      crm: 'hubspot',
      redisUrl: proxy.url,
      companies: 40,
      logLevel: 'silent',
    });
    await runEnded(system);
    scenario = new Scenario(system);
  }, 120_000);

  afterAll(async () => {
    proxy?.release();
    await direct?.call('CLIENT', 'UNPAUSE').catch(() => undefined);
    await stopTestSystem(system);
    direct?.disconnect();
    await proxy?.close();
    await redisServer.dispose();
  });

  it('CLIENT PAUSE WRITE: 503 within 2 s, then every event applied once', async () => {
    await scenario.run(
      'pause',
      async () => {
        await direct.call('CLIENT', 'PAUSE', String(PAUSE_MS), 'WRITE');
      },
      // PUBLISH waits out a WRITE pause: it returns when the pause has ended by itself.
      async () => {
        await direct.publish('rc-test-pause-probe', '1');
      },
    );
  }, 120_000);

  it('a network that swallows packets: 503 within 2 s, then every event applied once', async () => {
    await scenario.run(
      'swallowed',
      async () => proxy.swallow(),
      async () => proxy.release(),
    );
  }, 120_000);
});

describe('webhooks on a hung Redis Cluster', () => {
  let cluster: LocalRedisCluster;
  let system: LocalSystem;
  let scenario: Scenario;

  beforeAll(async () => {
    cluster = await LocalRedisCluster.start({ masters: 3 });
    system = await startTestSystem({
      crm: 'hubspot',
      companies: 40,
      logLevel: 'silent',
      env: { REDIS_CLUSTER_NODES: cluster.nodesEnv },
    });
    await runEnded(system);
    scenario = new Scenario(system);
  }, 120_000);

  afterAll(async () => {
    for (const shard of (await cluster?.topology()) ?? []) {
      await cluster.command(shard.master, ['CLIENT', 'UNPAUSE']).catch(() => undefined);
    }
    await stopTestSystem(system);
    await cluster?.stop();
  });

  it('CLIENT PAUSE WRITE on every master: 503 within 2 s, then every event applied once', async () => {
    const masters = (await cluster.topology()).map((s) => s.master);
    await scenario.run(
      'cluster-pause',
      async () => {
        for (const port of masters)
          await cluster.command(port, ['CLIENT', 'PAUSE', String(PAUSE_MS), 'WRITE']);
      },
      async () => {
        for (const port of masters) await cluster.command(port, ['PUBLISH', 'rc-test-pause-probe', '1']);
      },
    );
  }, 120_000);
});

describe('webhooks on a Redis Cluster behind a network that swallows packets', () => {
  let cluster: LocalRedisCluster;
  const proxies: SwallowingProxy[] = [];
  let system: LocalSystem;
  let scenario: Scenario;

  beforeAll(async () => {
    cluster = await LocalRedisCluster.start({ masters: 3 });
    // Each node announces its proxy's port: the connector reaches every node through a proxy, and the nodes
    // still talk to each other directly on their bus ports.
    for (const node of cluster.nodes) {
      const proxy = new SwallowingProxy({ host: '127.0.0.1', port: node.port });
      await proxy.listen();
      proxies.push(proxy);
      await cluster.command(node.port, ['CONFIG', 'SET', 'cluster-announce-port', String(proxy.port)]);
    }
    const proxied = new Set(proxies.map((p) => p.port));
    await waitFor(
      'every node to announce its proxy',
      async () => {
        for (const node of cluster.nodes) {
          const slots = (await cluster.command(node.port, ['CLUSTER', 'SLOTS'])) as unknown[][];
          const ports = slots.flatMap((range) => range.slice(2).map((n) => Number((n as unknown[])[1])));
          if (ports.length === 0 || !ports.every((port) => proxied.has(port))) return undefined;
        }
        return true;
      },
      30_000,
      100,
    );
    system = await startTestSystem({
      crm: 'hubspot',
      companies: 40,
      logLevel: 'silent',
      env: { REDIS_CLUSTER_NODES: proxies.map((p) => `127.0.0.1:${p.port}`).join(',') },
    });
    await runEnded(system);
    scenario = new Scenario(system);
  }, 120_000);

  afterAll(async () => {
    for (const proxy of proxies) proxy.release();
    await stopTestSystem(system);
    for (const proxy of proxies) await proxy.close();
    await cluster?.stop();
  });

  it('every master swallowed: 503 within 2 s, then every event applied once', async () => {
    await scenario.run(
      'cluster-swallowed',
      async () => {
        for (const proxy of proxies) proxy.swallow();
      },
      async () => {
        for (const proxy of proxies) proxy.release();
      },
    );
  }, 120_000);
});
