import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import type { AppContext } from '../app/context.js';
import { LuaScript } from '../storage/lua-script.js';
import { MIGRATIONS } from './registry.js';
import type { MigrationStep } from './step.js';

/**
 * Runs the upgrade steps a deployment has not run yet, once per deployment: the schema version in Redis
 * (`Keys.schemaVersion`) is the number of the last step that ran, and one process at a time runs steps, under
 * the upgrade lock (`Keys.schemaUpgradeLock`), renewed while it works. A process starting meanwhile waits until
 * the version is the latest (then runs nothing) or the lock is free again (its holder failed or died: it takes
 * the lock and runs what is left). Every process kind calls it before it starts workers or serves.
 */

const RAISE = LuaScript.load('schema-version-raise');
const RENEW = LuaScript.load('lock-renew');
const RELEASE = LuaScript.load('locks-release');
const raiseReply = z.enum(['raised', 'lost']);
const renewReply = z.enum(['renewed', 'lost']);
const releaseReply = z.number();

export interface MigrationTiming {
  /** How long the lock lasts without a renewal: how soon a waiter takes over from a holder that died. */
  lockMs: number;
  /** How often the holder renews it. */
  renewMs: number;
  /** How often a waiter looks at the version and the lock. */
  pollMs: number;
}

export const MIGRATION_TIMING: MigrationTiming = { lockMs: 30_000, renewMs: 10_000, pollMs: 250 };

export interface MigrationOutcome {
  /** The deployment's version when this process first read it (0: no step had run). */
  from: number;
  /** Its version when this process went on. */
  to: number;
  /** The steps this process ran; empty when the deployment was current or another process ran them. */
  ran: number[];
}

export class SchemaVersionInvalidError extends Error {
  readonly code = 'SCHEMA_VERSION_INVALID';
  constructor(
    readonly key: string,
    readonly value: string,
  ) {
    super(
      `the schema version ${key} holds ${JSON.stringify(value)}, not a step number: set it to the number of ` +
        'the last upgrade step of src/migrations that ran on this deployment, or delete it to run every step',
    );
    this.name = 'SchemaVersionInvalidError';
  }
}

export class MigrationFailedError extends Error {
  readonly code = 'MIGRATION_FAILED';
  constructor(
    readonly step: MigrationStep,
    cause: unknown,
  ) {
    super(
      `upgrade step ${step.version} (${step.name}) failed: ${cause instanceof Error ? cause.message : String(cause)}; ` +
        'the next start runs it again',
      { cause },
    );
    this.name = 'MigrationFailedError';
  }
}

const versionSchema = z.string().regex(/^\d+$/).transform(Number);

async function readVersion(ctx: Pick<AppContext, 'redis' | 'keys'>): Promise<number> {
  const key = ctx.keys.schemaVersion();
  const raw = await ctx.redis.get(key);
  if (raw === null) return 0;
  const parsed = versionSchema.safeParse(raw);
  if (!parsed.success) throw new SchemaVersionInvalidError(key, raw);
  return parsed.data;
}

export async function runPendingMigrations(
  ctx: AppContext,
  steps: readonly MigrationStep[] = MIGRATIONS,
  timing: MigrationTiming = MIGRATION_TIMING,
): Promise<MigrationOutcome> {
  const ordered = [...steps].sort((a, b) => a.version - b.version);
  const latest = ordered.at(-1)?.version ?? 0;
  const from = await readVersion(ctx);
  if (from > latest) {
    ctx.logger.warn(
      { schemaVersion: from, latest },
      'the deployment was upgraded by a newer release than this one: no upgrade step to run',
    );
  }
  let version = from;
  let said = false;
  while (version < latest) {
    const token = randomUUID();
    const lock = ctx.keys.schemaUpgradeLock();
    if ((await ctx.redis.set(lock, token, 'PX', timing.lockMs, 'NX')) === 'OK') {
      const ran = await runUnderLock(ctx, ordered, token, timing);
      if (ran !== null) return { from, to: latest, ran };
      // The lease lapsed while a step ran: another process may hold the lock now, so this one waits for it.
    } else {
      if (!said) {
        ctx.logger.info(
          { schemaVersion: version, latest },
          'another process is running the upgrade steps: waiting for it',
        );
        said = true;
      }
      await sleep(timing.pollMs);
    }
    version = await readVersion(ctx);
  }
  return { from, to: version, ran: [] };
}

/** The pending steps, run while holding the lock; null when the lock was lost (nothing more run then). */
async function runUnderLock(
  ctx: AppContext,
  steps: readonly MigrationStep[],
  token: string,
  timing: MigrationTiming,
): Promise<number[] | null> {
  const keys = [ctx.keys.schemaUpgradeLock()];
  // A lease that lapsed shows when the version is raised (the script checks the holder); a renewal that
  // failed (Redis unreachable) stops the run once the step under way ends.
  let renewal: Promise<void> = Promise.resolve();
  let renewFailure: { err: unknown } | null = null;
  const timer = setInterval(() => {
    renewal = RENEW.run(ctx.redis, keys, [token, timing.lockMs], renewReply).then(
      () => undefined,
      (err: unknown) => {
        renewFailure ??= { err };
      },
    );
  }, timing.renewMs);
  timer.unref();
  try {
    // Read under the lock: a process that held it before may have run steps since this one first looked.
    const at = await readVersion(ctx);
    const ran: number[] = [];
    for (const step of steps) {
      if (step.version <= at) continue;
      let result: Record<string, unknown>;
      try {
        result = await step.run(ctx);
      } catch (err) {
        throw new MigrationFailedError(step, err);
      }
      await renewal;
      if (renewFailure) throw (renewFailure as { err: unknown }).err;
      const raised = await RAISE.run(
        ctx.redis,
        [...keys, ctx.keys.schemaVersion()],
        [token, step.version],
        raiseReply,
      );
      if (raised === 'lost') {
        ctx.logger.warn({ step: step.version }, 'upgrade lock lost while a step ran: waiting for its holder');
        return null;
      }
      ctx.logger.info({ step: step.version, ...result }, `upgrade step ran: ${step.name}`);
      ran.push(step.version);
    }
    return ran;
  } finally {
    clearInterval(timer);
    await renewal;
    await RELEASE.run(ctx.redis, keys, [token], releaseReply);
  }
}
