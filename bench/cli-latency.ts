/**
 * How long `status` and `record` take from the shell: the median of 10 runs of each, run directly through
 * node (`node dist/src/cli/bin.js …`, what the demo's printed `report-connector` function does) and through
 * `npx report-connector …` from the project's folder. A deployment under a prefix of its own: one installation
 * waiting for approval (so `record` calls no CRM) with one record in review.
 *
 *   npm run bench:cli -- [--runs 10] [--bin dist/src/cli/bin.js] [--no-npx]
 *
 * `--bin` measures another build (an older commit's, for a before/after). Table to stdout, progress to stderr.
 * See docs/benchmarks.md, "CLI latency".
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { dirname, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { createAppContext } from '../src/app/context.js';
import { intOption } from '../src/cli/args.js';
import { loadConfig } from '../src/config.js';
import { createLogger } from '../src/log.js';
import { crmKind } from '../src/providers.js';
import { waitForRedis } from '../src/redis.js';
import { fingerprintOf } from '../src/storage/record-state.js';
import { REDIS_URL } from '../test/support/redis-url.js';
import { describeMachine } from './support/machine.js';
import { benchPrefix, deleteKeys } from './support/redis-keys.js';

const { values } = parseArgs({
  options: {
    runs: { type: 'string' },
    bin: { type: 'string' },
    'no-npx': { type: 'boolean', default: false },
  },
});
const runs = intOption('runs', values.runs, 10, 1, 100);
const bin = resolve(values.bin ?? 'dist/src/cli/bin.js');
const root = resolve(dirname(bin), '..', '..', '..');

function timed(
  cmd: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  cwd: string,
): Promise<{ ms: number; code: number | null; err: string }> {
  return new Promise((done) => {
    const start = performance.now();
    const child = spawn(cmd, args, { env, cwd, stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d: Buffer) => {
      err += d.toString();
    });
    child.once('exit', (code) => done({ ms: performance.now() - start, code, err }));
  });
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

async function main(): Promise<void> {
  const prefix = benchPrefix('cli');
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    REDIS_URL,
    REDIS_PREFIX: prefix,
    ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    REPORTS_API_URL: 'http://127.0.0.1:9/api',
  };
  delete env.LOG_LEVEL;
  const ctx = createAppContext(loadConfig(env, { envFile: null, mode: 'read-only' }), {
    logger: createLogger('silent'),
  });
  try {
    await waitForRedis(ctx.redis);
    const inst = await ctx.installations.upsert({
      crm: crmKind('hubspot'),
      externalId: `bench-${prefix}`,
      mode: 'oauth',
      tokens: { accessToken: 'unused' },
    });
    const recordId = '1001';
    await ctx.index.apply(inst.id, [
      {
        recordId,
        slug: null,
        status: 'needs_review',
        score: null,
        autoLinked: false,
        unlinkedName: null,
        review: { recordId, name: 'Bench Company', candidates: [], at: new Date().toISOString() },
        fingerprint: fingerprintOf({ name: 'Bench Company', domain: null, fields: { slug: null } }),
      },
    ]);
    const commands: [string, string[]][] = [
      ['status', ['status']],
      ['record', ['record', '--installation', inst.id, '--record', recordId]],
    ];
    const rows: string[] = [];
    for (const [name, args] of commands) {
      const ways: [string, string, string[]][] = [[`node ${name}`, process.execPath, [bin, ...args]]];
      if (!values['no-npx']) ways.push([`npx ${name}`, 'npx', ['report-connector', ...args]]);
      for (const [label, cmd, argv] of ways) {
        const times: number[] = [];
        for (let i = 0; i < runs; i++) {
          const r = await timed(cmd, argv, env, root);
          if (r.code !== 0) throw new Error(`${label} exited ${r.code}: ${r.err.slice(0, 500)}`);
          times.push(r.ms);
          process.stderr.write('.');
        }
        process.stderr.write(` ${label}\n`);
        rows.push(
          `| ${label} | ${Math.round(median(times))} | ${Math.round(Math.min(...times))} | ${Math.round(Math.max(...times))} |`,
        );
      }
    }
    process.stdout.write(`${await describeMachine(REDIS_URL)}\n\n`);
    process.stdout.write(
      `Build: ${bin}, ${runs} runs each\n\n| command | median ms | min ms | max ms |\n|---|---|---|---|\n${rows.join('\n')}\n`,
    );
  } finally {
    await deleteKeys(REDIS_URL, prefix);
    await ctx.close();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
