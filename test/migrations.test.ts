import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { type AppContext, createAppContext } from '../src/app/context.js';
import type { CommandIo } from '../src/cli/io.js';
import { main } from '../src/cli/main.js';
import { loadConfig } from '../src/config.js';
import { createLogger } from '../src/log.js';
import { retirePollsUnderOldIds } from '../src/migrations/005-polls-under-old-ids.js';
import { MIGRATIONS } from '../src/migrations/registry.js';
import {
  MigrationFailedError,
  type MigrationTiming,
  runPendingMigrations,
  SchemaVersionInvalidError,
} from '../src/migrations/runner.js';
import type { MigrationStep } from '../src/migrations/step.js';
import { jobIdPart, legacyJobIdPart } from '../src/pipeline/queues.js';
import { crmKind } from '../src/providers.js';
import { closeRedis, createRedis, deleteByPattern, waitForRedis } from '../src/redis.js';
import { Keys } from '../src/storage/keys.js';
import { freePort } from '../src/util/free-port.js';
import { suiteSystem } from './support/local-system.js';
import { REDIS_URL } from './support/redis-url.js';
import { keysWithPrefix } from './support/system-state.js';

/**
 * The upgrade steps of src/migrations: numbered files with a header saying what each upgrades from and when it
 * can go, run once per deployment under a lock, with the deployment's schema version in Redis.
 */

const FOLDER = join(import.meta.dirname, '..', 'src', 'migrations');
const MACHINERY = ['registry.ts', 'runner.ts', 'step.ts'];
const STEP_FILE = /^(\d{3})-[a-z0-9]+(?:-[a-z0-9]+)*\.ts$/;

const stepFiles = readdirSync(FOLDER)
  .filter((f) => !MACHINERY.includes(f))
  .sort();

describe('src/migrations (house rule)', () => {
  it('holds numbered steps besides its machinery, numbers unique and without gaps', () => {
    expect(stepFiles.length).toBeGreaterThan(0);
    for (const file of stepFiles) expect(file, 'a step file is NNN-what-it-does.ts').toMatch(STEP_FILE);
    const numbers = stepFiles.map((f) => Number(STEP_FILE.exec(f)?.[1]));
    expect(new Set(numbers).size, 'unique numbers').toBe(numbers.length);
    expect(numbers, 'no gap').toEqual(numbers.map((_, i) => numbers[0]! + i));
  });

  it.each(stepFiles)('%s starts with a header: what it upgrades from, when it can go', (file) => {
    const source = readFileSync(join(FOLDER, file), 'utf8');
    const header = /^\/\*\*\n((?: \*.*\n)+?) \*\//.exec(source)?.[1] ?? '';
    expect(header, 'the file starts with a /** ... */ block').not.toBe('');
    expect(header).toMatch(/^ \* Upgrades from: \S/m);
    expect(header).toMatch(/^ \* Can go when: \S/m);
    const version = Number(STEP_FILE.exec(file)?.[1]);
    expect(header, 'it names the schema version that makes it unneeded').toContain(
      `schema version ${version} or more`,
    );
  });

  it('registers every step file, in order, each under its file number', async () => {
    const exported = await Promise.all(
      stepFiles.map(async (file) => ((await import(join(FOLDER, file))) as { step: MigrationStep }).step),
    );
    expect(exported.map((s) => s.version)).toEqual(stepFiles.map((f) => Number(STEP_FILE.exec(f)?.[1])));
    expect(MIGRATIONS).toEqual(exported);
  });

  it('is run by the CLI alone: nothing else under src/ imports it', () => {
    const importers = sourceFiles(join(import.meta.dirname, '..', 'src'))
      .filter((f) => !f.includes(`${join('src', 'migrations')}/`) && !f.includes(join('src', 'cli')))
      .filter((f) => /from '[./]*\/migrations\//.test(readFileSync(f, 'utf8')));
    expect(importers).toEqual([]);
  });
});

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sourceFiles(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

// ---- the runner, with steps of the test's own, on the real Redis -----------------------------------------

const connections: Redis[] = [];
const prefixes: string[] = [];
const quiet = createLogger('silent');
const fast: MigrationTiming = { lockMs: 2_000, renewMs: 500, pollMs: 20 };

afterAll(async () => {
  const redis = createRedis(REDIS_URL, 'producer');
  await waitForRedis(redis);
  for (const prefix of prefixes) await deleteByPattern(redis, `${prefix}:*`);
  await closeRedis(redis, ...connections);
});

/** What a process's runner needs: its own connection (one per process), the keys, a logger. */
async function processOn(prefix: string): Promise<{ ctx: AppContext; redis: Redis; sets: () => number }> {
  const redis = createRedis(REDIS_URL, 'producer');
  connections.push(redis);
  await waitForRedis(redis);
  let sets = 0;
  const counted = new Proxy(redis, {
    get(target, name, receiver) {
      if (name === 'set') {
        return (...args: Parameters<Redis['set']>) => {
          sets += 1;
          return (target.set as (...a: unknown[]) => unknown).apply(target, args);
        };
      }
      const value: unknown = Reflect.get(target, name, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  const ctx = { redis: counted, keys: new Keys(prefix), logger: quiet } as unknown as AppContext;
  return { ctx, redis, sets: () => sets };
}

function freshPrefix(): string {
  const prefix = `rc-test-migrations-${randomUUID().slice(0, 8)}`;
  prefixes.push(prefix);
  return prefix;
}

/** Steps 1..n that count their runs (by the context they ran with); the first may wait on a gate. */
function countingSteps(n: number, gate?: { entered: (ctx: AppContext) => void; open: Promise<void> }) {
  const runs: { version: number; ctx: AppContext }[] = [];
  const steps: MigrationStep[] = Array.from({ length: n }, (_, i) => ({
    version: i + 1,
    name: `step ${i + 1}`,
    run: async (ctx: AppContext) => {
      if (i === 0 && gate) {
        gate.entered(ctx);
        await gate.open;
      }
      runs.push({ version: i + 1, ctx });
      return {};
    },
  }));
  return { steps, runs };
}

/** A gate for the first step: `holder` resolves with the context of the process that entered it. */
function stepGate(): {
  gate: { entered: (ctx: AppContext) => void; open: Promise<void> };
  holder: Promise<AppContext>;
  open: () => void;
} {
  let entered!: (ctx: AppContext) => void;
  const holder = new Promise<AppContext>((resolve) => {
    entered = resolve;
  });
  let open!: () => void;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { gate: { entered, open: opened }, holder, open };
}

describe('the migration runner', () => {
  it('runs every step on a deployment without a version, then none; only the pending ones after', async () => {
    const prefix = freshPrefix();
    const { ctx, redis } = await processOn(prefix);
    const { steps, runs } = countingSteps(3);

    expect(await runPendingMigrations(ctx, steps, fast)).toEqual({ from: 0, to: 3, ran: [1, 2, 3] });
    expect(runs.map((r) => r.version)).toEqual([1, 2, 3]);
    expect(await redis.get(ctx.keys.schemaVersion())).toBe('3');
    expect(await redis.exists(ctx.keys.schemaUpgradeLock())).toBe(0);

    expect(await runPendingMigrations(ctx, steps, fast)).toEqual({ from: 3, to: 3, ran: [] });
    expect(runs).toHaveLength(3);

    const more = countingSteps(5);
    expect(await runPendingMigrations(ctx, more.steps, fast)).toEqual({ from: 3, to: 5, ran: [4, 5] });
    expect(more.runs.map((r) => r.version)).toEqual([4, 5]);
  });

  it('runs nothing on a deployment a newer release upgraded', async () => {
    const prefix = freshPrefix();
    const { ctx, redis } = await processOn(prefix);
    await redis.set(ctx.keys.schemaVersion(), '9');
    const { steps, runs } = countingSteps(3);
    expect(await runPendingMigrations(ctx, steps, fast)).toEqual({ from: 9, to: 9, ran: [] });
    expect(runs).toEqual([]);
  });

  it('refuses a version that is not a number, saying what to do, and runs nothing', async () => {
    const prefix = freshPrefix();
    const { ctx, redis } = await processOn(prefix);
    await redis.set(ctx.keys.schemaVersion(), 'v2');
    const { steps, runs } = countingSteps(3);
    const failure = await runPendingMigrations(ctx, steps, fast).catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(SchemaVersionInvalidError);
    expect(failure).toMatchObject({ code: 'SCHEMA_VERSION_INVALID' });
    expect(runs).toEqual([]);
  });

  it('stops at a failing step: the version names the last step done, the lock is free, the next start goes on', async () => {
    const prefix = freshPrefix();
    const { ctx, redis } = await processOn(prefix);
    const { steps, runs } = countingSteps(3);
    const failing = steps.map((s) =>
      s.version === 2
        ? {
            ...s,
            run: async () => {
              throw new Error('Redis went away');
            },
          }
        : s,
    );
    const failure = await runPendingMigrations(ctx, failing, fast).catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(MigrationFailedError);
    expect(failure).toMatchObject({ code: 'MIGRATION_FAILED' });
    expect((failure as Error).message).toContain('upgrade step 2 (step 2) failed: Redis went away');
    expect(await redis.get(ctx.keys.schemaVersion())).toBe('1');
    expect(await redis.exists(ctx.keys.schemaUpgradeLock())).toBe(0);

    expect(await runPendingMigrations(ctx, steps, fast)).toEqual({ from: 1, to: 3, ran: [2, 3] });
    expect(runs.map((r) => r.version)).toEqual([1, 2, 3]);
  });

  it('two processes starting at once: one runs the steps, the other waits for the version and runs none', async () => {
    const prefix = freshPrefix();
    const a = await processOn(prefix);
    const b = await processOn(prefix);
    const { gate, holder, open } = stepGate();
    const { steps, runs } = countingSteps(3, gate);
    let returned = 0;
    const both = [a, b].map((p) =>
      runPendingMigrations(p.ctx, steps, fast).then((outcome) => {
        returned += 1;
        return outcome;
      }),
    );
    // One is in its first step; the other keeps asking for the lock, and neither returns meanwhile.
    const waiter = (await holder) === a.ctx ? b : a;
    const asked = waiter.sets();
    await vi.waitFor(() => expect(waiter.sets()).toBeGreaterThan(asked + 3), { timeout: 5_000 });
    expect(returned).toBe(0);
    open();
    const outcomes = await Promise.all(both);

    expect(runs.map((r) => r.version)).toEqual([1, 2, 3]);
    expect(new Set(runs.map((r) => r.ctx)).size, 'one process ran every step').toBe(1);
    expect(outcomes.map((o) => o.ran)).toEqual(expect.arrayContaining([[1, 2, 3], []]));
    for (const o of outcomes) expect(o.to).toBe(3);
    expect(await a.redis.get(a.ctx.keys.schemaVersion())).toBe('3');
  });

  it('takes over from a holder that died: its lock lapses and the waiter runs the steps', async () => {
    const prefix = freshPrefix();
    const { ctx, redis } = await processOn(prefix);
    // A process that took the lock and died: nobody renews it.
    await redis.set(ctx.keys.schemaUpgradeLock(), 'a-dead-process', 'PX', 300);
    const { steps, runs } = countingSteps(2);
    expect(await runPendingMigrations(ctx, steps, fast)).toEqual({ from: 0, to: 2, ran: [1, 2] });
    expect(runs.map((r) => r.version)).toEqual([1, 2]);
  });

  it('keeps the lock while a step outlasts its lease', async () => {
    const prefix = freshPrefix();
    const a = await processOn(prefix);
    const b = await processOn(prefix);
    const short: MigrationTiming = { lockMs: 300, renewMs: 50, pollMs: 20 };
    const { gate, holder, open } = stepGate();
    const { steps, runs } = countingSteps(1, gate);
    const first = runPendingMigrations(a.ctx, steps, short);
    await holder;
    const token = await a.redis.get(a.ctx.keys.schemaUpgradeLock());
    const second = runPendingMigrations(b.ctx, steps, short);
    // Several leases pass while the step runs (b asks every 20 ms, the lease is 300): the lock still names
    // its holder, so b keeps waiting.
    const asked = b.sets();
    await vi.waitFor(() => expect(b.sets()).toBeGreaterThan(asked + 40), { timeout: 5_000 });
    expect(await a.redis.get(a.ctx.keys.schemaUpgradeLock())).toBe(token);
    open();
    expect((await first).ran).toEqual([1]);
    expect((await second).ran).toEqual([]);
    expect(runs).toHaveLength(1);
  });
});

/** The deployment's keys but BullMQ's, which come and go with its own timers (queue meta, the stalled check). */
async function connectorState(ctx: AppContext): Promise<string[]> {
  const queues = ctx.queues.all().map((q) => ctx.keys.queuePrefix(q.name));
  return (await keysWithPrefix(ctx.redis, ctx.config.redisPrefix)).filter(
    (k) => !queues.some((q) => k.startsWith(q)),
  );
}

/** The connector's keys once they have stayed the same for 6 s (at most 30 s of waiting). */
async function settledState(ctx: AppContext): Promise<string[]> {
  let state = await connectorState(ctx);
  let since = Date.now();
  const deadline = Date.now() + 30_000;
  while (Date.now() - since < 6_000 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    const next = await connectorState(ctx);
    if ([...next].sort().join('\n') !== [...state].sort().join('\n')) {
      state = next;
      since = Date.now();
    }
  }
  return state;
}

// ---- the real steps ------------------------------------------------------------------------------------

/** A real context under a fresh prefix, as `openContext` makes one; closed by the caller. */
async function contextOn(prefix: string): Promise<AppContext> {
  const config = loadConfig(
    {
      ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64'),
      ADMIN_TOKEN: 'an-admin-token-of-some-length',
      REPORTS_API_URL: 'http://127.0.0.1:4010/api',
      REDIS_URL,
      REDIS_PREFIX: prefix,
    },
    { envFile: null },
  );
  const ctx = createAppContext(config, { logger: quiet });
  await waitForRedis(ctx.redis);
  return ctx;
}

describe('the upgrade steps', () => {
  it('on a new, empty deployment: every step runs, writes nothing but the version', async () => {
    const ctx = await contextOn(freshPrefix());
    try {
      const outcome = await runPendingMigrations(ctx);
      expect(outcome).toEqual({ from: 0, to: MIGRATIONS.length, ran: MIGRATIONS.map((s) => s.version) });
      expect(await connectorState(ctx)).toEqual([ctx.keys.schemaVersion()]);
      expect((await runPendingMigrations(ctx)).ran).toEqual([]);
    } finally {
      await ctx.close();
    }
  });

  it('step 5 retires the polls scheduled under the old job ids, and keeps the current ones', async () => {
    const ctx = await contextOn(freshPrefix());
    try {
      const installation = await ctx.installations.upsert({
        crm: crmKind('hubspot'),
        externalId: '4242',
        mode: 'token',
        tokens: { accessToken: 'at' },
      });
      const old = `poll-${legacyJobIdPart(installation.id)}`;
      const current = `poll-${jobIdPart(installation.id)}`;
      expect(old).not.toBe(current);
      await ctx.queues.every(old, 60_000, 'poll', { installationId: installation.id });
      await ctx.schedules.schedulePoll(installation.id, 60_000);
      const schedulers = async () => (await ctx.queues.schedule.getJobSchedulers()).map((j) => j.key).sort();
      expect(await schedulers()).toEqual([current, old].sort());

      expect(await retirePollsUnderOldIds(ctx)).toBe(1);
      expect(await schedulers()).toEqual([current]);
      expect(await retirePollsUnderOldIds(ctx)).toBe(0);
    } finally {
      await ctx.close();
    }
  });
});

describe('a deployment of the release before the migrations', () => {
  const system = suiteSystem({ companies: 12, logLevel: 'silent' }, { firstRunEnded: true });

  it('upgrades in place: with no version, every step runs and changes nothing of its state', async () => {
    const { ctx } = system;
    expect(await ctx.redis.exists(ctx.keys.schemaVersion())).toBe(0);
    const installation = await ctx.installations.get(system.installationId);
    // The running system still writes on its own clock after its first run (the CRM usage reading trails a
    // burst by up to 5 s): compare against its state once that has settled, not against a write in flight.
    const before = await settledState(ctx);
    const outcome = await runPendingMigrations(ctx);
    expect(outcome).toEqual({ from: 0, to: MIGRATIONS.length, ran: MIGRATIONS.map((s) => s.version) });
    expect(await ctx.installations.get(system.installationId)).toEqual(installation);
    const after = await connectorState(ctx);
    expect(after.filter((k) => !before.includes(k))).toEqual([ctx.keys.schemaVersion()]);
    expect(before.filter((k) => !after.includes(k))).toEqual([]);
    expect((await runPendingMigrations(ctx)).ran).toEqual([]);
  });
});

describe('start-up', () => {
  /** `serve` under a prefix of its own, stopped as soon as it runs. */
  async function serveOnce(prefix: string): Promise<{ code: number; err: string[] }> {
    const err: string[] = [];
    const io: CommandIo = {
      out: () => undefined,
      err: (t) => err.push(t),
      env: {
        REDIS_URL,
        REDIS_PREFIX: prefix,
        REPORTS_API_URL: 'http://127.0.0.1:9/api',
        ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64'),
        ADMIN_TOKEN: 'an-admin-token-of-some-length',
        PORT: String(await freePort()),
        LOG_LEVEL: 'silent',
      },
      isTTY: false,
      untilStopped: () => Promise.resolve(),
    };
    return { code: await main(['serve'], io), err };
  }

  it('runs the pending steps, once: a deployment at the latest version runs none', async () => {
    const redis = createRedis(REDIS_URL, 'producer');
    connections.push(redis);
    await waitForRedis(redis);
    const keys = new Keys(freshPrefix());
    // A login failure counter kept per IPv6 address, which step 1 folds into its /64.
    const perAddress = keys.adminLoginFailures('2001:db8:1:2::5');
    const perUnit = keys.adminLoginFailures('2001:db8:1:2::/64');

    await redis.set(perAddress, '3', 'PX', 600_000);
    expect(await serveOnce(keys.prefix)).toEqual({ code: 0, err: [] });
    expect(await redis.get(keys.schemaVersion())).toBe(String(MIGRATIONS.length));
    expect(await redis.exists(perAddress)).toBe(0);
    expect(await redis.get(perUnit)).toBe('3');

    // At the latest version start-up runs no step: a counter of that shape stays where it is.
    await redis.set(perAddress, '2', 'PX', 600_000);
    expect(await serveOnce(keys.prefix)).toEqual({ code: 0, err: [] });
    expect(await redis.get(perAddress)).toBe('2');
    expect(await redis.get(perUnit)).toBe('3');
  });
});
