import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { waitFor } from './wait.js';

/**
 * A Redis Cluster of the test's own: `masters` masters (and `replicasPerMaster` replicas each) on free loopback
 * ports, each a `redis-server --cluster-enabled yes` child process without persistence (or append-only with
 * `appendOnly`), joined by `redis-cli --cluster create`. `kill(port)` SIGKILLs a node, `restart(...ports)` starts
 * killed ones again with the same arguments; `stop()` kills them all and removes their folder.
 * `REDIS_SERVER_BIN` and `REDIS_CLI_BIN` name the binaries when they are not on the PATH.
 */

const run = promisify(execFile);

/**
 * Every node process still running, killed when this process exits: a test file that times out in its
 * teardown must not leave a cluster behind (its children would outlive the test worker otherwise).
 */
const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});

export interface ClusterNodeProcess {
  port: number;
  child: ChildProcess | null;
  log: string;
}

export interface LocalClusterOptions {
  masters?: number;
  replicasPerMaster?: number;
  /** `cluster-node-timeout`: how long a silent master takes to be failed over (short keeps a test short). */
  nodeTimeoutMs?: number;
  /** `requirepass` (and `masterauth`) on every node; none by default. */
  password?: string | null;
  /**
   * TLS only (`--port 0`, TLS on the client port, the cluster bus and replication), with a CA and a certificate
   * for 127.0.0.1 made here by `openssl`; `caFile` is the CA's PEM.
   */
  tls?: boolean;
  /**
   * Append-only persistence flushed on every write (`appendfsync always`), each node in an AOF folder of its
   * own: a node SIGKILLed and restarted reads back everything it acknowledged, and its nodes-<port>.conf keeps
   * its identity and slots, as a production node with a disk does. Off by default (faster, nothing on disk).
   */
  appendOnly?: boolean;
}

export class LocalRedisCluster {
  readonly dir: string;
  readonly nodes: ClusterNodeProcess[] = [];

  private constructor(private readonly options: Required<LocalClusterOptions>) {
    this.dir = mkdtempSync(join(tmpdir(), 'rc-cluster-'));
  }

  static async start(options: LocalClusterOptions = {}): Promise<LocalRedisCluster> {
    const cluster = new LocalRedisCluster({
      masters: options.masters ?? 3,
      replicasPerMaster: options.replicasPerMaster ?? 0,
      nodeTimeoutMs: options.nodeTimeoutMs ?? 2_000,
      password: options.password ?? null,
      tls: options.tls ?? false,
      appendOnly: options.appendOnly ?? false,
    });
    try {
      await cluster.create();
    } catch (err) {
      await cluster.stop();
      throw err;
    }
    return cluster;
  }

  /** `host:port,…` of every node, as REDIS_CLUSTER_NODES takes it. */
  get nodesEnv(): string {
    return this.nodes.map((n) => `127.0.0.1:${n.port}`).join(',');
  }

  /** The CA's PEM file when the cluster speaks TLS. */
  get caFile(): string {
    return join(this.dir, 'ca.crt');
  }

  /** A CA and a certificate for 127.0.0.1 signed by it, for a TLS cluster: test material, valid two days. */
  private async makeCertificates(): Promise<void> {
    const at = (name: string) => join(this.dir, name);
    const subject = (cn: string) => ['-subj', `/CN=${cn}`];
    await run('openssl', [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-days',
      '2',
      '-keyout',
      at('ca.key'),
      '-out',
      at('ca.crt'),
      ...subject('report-connector test CA'),
    ]);
    await run('openssl', [
      'req',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      at('node.key'),
      '-out',
      at('node.csr'),
      ...subject('127.0.0.1'),
    ]);
    writeFileSync(at('node.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\n');
    await run('openssl', [
      'x509',
      '-req',
      '-days',
      '2',
      '-in',
      at('node.csr'),
      '-CA',
      at('ca.crt'),
      '-CAkey',
      at('ca.key'),
      '-CAcreateserial',
      '-extfile',
      at('node.ext'),
      '-out',
      at('node.crt'),
    ]);
  }

  /** redis-cli's options to reach a node of this cluster (TLS, password). */
  private cliAuth(): string[] {
    return [
      ...(this.options.tls ? ['--tls', '--cacert', this.caFile] : []),
      ...(this.options.password ? ['-a', this.options.password, '--no-auth-warning'] : []),
    ];
  }

  private async create(): Promise<void> {
    if (this.options.tls) await this.makeCertificates();
    const total = this.options.masters * (1 + this.options.replicasPerMaster);
    const ports = await freeClusterPorts(total);
    for (const port of ports) {
      const node: ClusterNodeProcess = { port, child: null, log: '' };
      this.nodes.push(node);
      await this.spawnNode(node);
    }
    const cli = process.env.REDIS_CLI_BIN ?? 'redis-cli';
    await run(
      cli,
      [
        ...this.cliAuth(),
        '--cluster',
        'create',
        ...ports.map((p) => `127.0.0.1:${p}`),
        '--cluster-replicas',
        String(this.options.replicasPerMaster),
        '--cluster-yes',
      ],
      { timeout: 60_000 },
    );
    await this.waitHealthy();
    // The replicas' roles travel by gossip: wait until every node agrees on who replicates whom.
    await waitFor(
      'every master to have its replicas',
      async () => {
        const shards = await this.topology();
        return shards.length === this.options.masters &&
          shards.every((s) => s.replicas.length === this.options.replicasPerMaster)
          ? true
          : undefined;
      },
      30_000,
      100,
    );
    // A replica that never finished its first sync cannot take over (its data is too old to be trusted), so a
    // master killed right after start would have no successor: wait until every replica's link is up.
    for (const shard of await this.topology()) {
      for (const replica of shard.replicas) {
        await waitFor(
          `the replica on port ${replica} to finish its first sync`,
          async () =>
            /master_link_status:up/.test(String(await this.command(replica, ['INFO', 'replication'])))
              ? true
              : undefined,
          30_000,
          100,
        );
      }
    }
  }

  private async spawnNode(node: ClusterNodeProcess): Promise<void> {
    const bin = process.env.REDIS_SERVER_BIN ?? 'redis-server';
    const { password, tls } = this.options;
    const secured = [
      ...(password ? ['--requirepass', password, '--masterauth', password] : []),
      ...(tls
        ? [
            '--port',
            '0',
            '--tls-port',
            String(node.port),
            '--tls-cluster',
            'yes',
            '--tls-replication',
            'yes',
            '--tls-cert-file',
            join(this.dir, 'node.crt'),
            '--tls-key-file',
            join(this.dir, 'node.key'),
            '--tls-ca-cert-file',
            this.caFile,
            '--tls-auth-clients',
            'no',
          ]
        : ['--port', String(node.port)]),
    ];
    const child = spawn(
      bin,
      [
        ...secured,
        '--bind',
        '127.0.0.1',
        '--cluster-enabled',
        'yes',
        '--cluster-config-file',
        join(this.dir, `nodes-${node.port}.conf`),
        '--cluster-node-timeout',
        String(this.options.nodeTimeoutMs),
        '--dir',
        this.dir,
        '--save',
        '',
        ...(this.options.appendOnly
          ? // Every node shares --dir (and so would share the default `appendonlydir`): one AOF folder each.
            [
              '--appendonly',
              'yes',
              '--appendfsync',
              'always',
              '--appenddirname',
              `appendonlydir-${node.port}`,
            ]
          : ['--appendonly', 'no']),
        // A replica's first sync starts at once instead of after the default 5 s wait for other replicas.
        '--repl-diskless-sync-delay',
        '0',
        '--daemonize',
        'no',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    node.child = child;
    live.add(child);
    node.log = '';
    let failed: Error | null = null;
    child.once('error', (err) => {
      failed = new Error(
        `${bin} could not be started (${err.message}): install Redis or set REDIS_SERVER_BIN`,
      );
    });
    child.once('exit', () => {
      live.delete(child);
      if (node.child === child) node.child = null;
    });
    const collect = (chunk: Buffer) => {
      node.log = (node.log + chunk.toString('utf8')).slice(-20_000);
    };
    child.stdout?.on('data', collect);
    child.stderr?.on('data', collect);
    await waitFor(
      `cluster node on port ${node.port} to accept connections`,
      () => {
        if (failed) throw failed;
        if (node.child !== child) throw new Error(`redis-server exited at start: ${node.log}`);
        return /Ready to accept connections/.test(node.log) ? true : undefined;
      },
      20_000,
      25,
    );
  }

  /** Every live node says `cluster_state:ok` and every slot is served. */
  async waitHealthy(timeoutMs = 30_000): Promise<void> {
    await waitFor(
      'the cluster to be ok on every node',
      async () => {
        for (const node of this.nodes.filter((n) => n.child)) {
          const info = await this.command(node.port, ['CLUSTER', 'INFO']);
          if (!/cluster_state:ok/.test(String(info)) || !/cluster_slots_ok:16384/.test(String(info))) {
            return undefined;
          }
        }
        return true;
      },
      timeoutMs,
      100,
    );
  }

  /** One command on one node, on a short-lived plain connection. */
  async command(port: number, args: string[]): Promise<unknown> {
    const client = new Redis({
      port,
      host: '127.0.0.1',
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      ...(this.options.password ? { password: this.options.password } : {}),
      ...(this.options.tls ? { tls: { ca: readFileSync(this.caFile, 'utf8') } } : {}),
    });
    client.on('error', () => {});
    try {
      await client.connect();
      const [name, ...rest] = args as [string, ...string[]];
      return await client.call(name, ...rest);
    } finally {
      client.disconnect();
    }
  }

  /** The port of each master, its slot ranges and the ports of its replicas, as the cluster sees it now. */
  async topology(): Promise<{ master: number; slots: [number, number][]; replicas: number[] }[]> {
    const live = this.nodes.find((n) => n.child);
    if (!live) throw new Error('no cluster node is running');
    const raw = String(await this.command(live.port, ['CLUSTER', 'NODES']));
    const rows = raw
      .trim()
      .split('\n')
      .map((line) => line.split(' '))
      .map(([id, addr, flags, masterId, , , , , ...slots]) => ({
        id: id!,
        slots: slots
          .filter((r) => !r.startsWith('['))
          .map((r): [number, number] => {
            const [from, to = from] = r.split('-').map(Number) as [number, number?];
            return [from, to!];
          }),
        port: Number(addr!.split('@')[0]!.split(':')[1]),
        master: flags!.includes('master') && !flags!.includes('fail'),
        replicaOf: masterId === '-' ? null : masterId!,
        failed: flags!.includes('fail'),
      }));
    // A master without slots is a node not yet told it is a replica (right after `--cluster create`).
    return rows
      .filter((r) => r.master && r.slots.length > 0)
      .map((m) => ({
        master: m.port,
        slots: m.slots,
        replicas: rows.filter((r) => r.replicaOf === m.id && !r.failed).map((r) => r.port),
      }));
  }

  /** SIGKILL one node: no goodbye, its replica (if any) takes over after the node timeout. */
  async kill(port: number): Promise<void> {
    const node = this.nodes.find((n) => n.port === port);
    const child = node?.child;
    if (!node || !child) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
    node.child = null;
  }

  /**
   * Starts killed nodes again with the arguments they had (same port, config file and AOF folder), then waits
   * until the cluster is ok on every node. Nodes still running are left alone.
   */
  async restart(...ports: number[]): Promise<void> {
    for (const port of ports) {
      const node = this.nodes.find((n) => n.port === port);
      if (!node) throw new Error(`no cluster node on port ${port}`);
      if (!node.child) await this.spawnNode(node);
    }
    await this.waitHealthy();
  }

  /** The ports of the nodes not running now (killed). */
  get stopped(): number[] {
    return this.nodes.filter((n) => !n.child).map((n) => n.port);
  }

  async stop(): Promise<void> {
    await Promise.all(this.nodes.map((n) => this.kill(n.port)));
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/**
 * `count` ports that are free and whose cluster bus port (port + 10000) is free too: a node listens on both.
 * Random, so test files started together do not race for the same ones.
 */
async function freeClusterPorts(count: number): Promise<number[]> {
  const out: number[] = [];
  while (out.length < count) {
    const port = 20_000 + Math.floor(Math.random() * 10_000);
    if (out.includes(port)) continue;
    if ((await portFree(port)) && (await portFree(port + 10_000))) out.push(port);
  }
  return out;
}

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}
