import { spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../src/cli/main.js';
import { closeRedis, createRedis, deleteByPattern } from '../src/redis.js';
import { capturedIo, spawnCli } from './support/cli-run.js';
import { REDIS_URL } from './support/redis-url.js';
import { buildWorkerCli } from './support/worker-process.js';

const prefix = `rc-test-${randomUUID().slice(0, 8)}`;

function io(env: Record<string, string>) {
  return capturedIo({ REDIS_URL, REDIS_PREFIX: prefix, ...env });
}

const goodEnv = {
  REPORTS_API_URL: 'http://127.0.0.1:9/api',
  ENCRYPTION_KEY: randomBytes(32).toString('base64'),
  ADMIN_TOKEN: 'a-long-admin-token-for-tests',
  LOG_LEVEL: 'silent',
};

beforeAll(async () => {
  // A deployment that has run under this prefix (a prefix nothing was ever stored under is refused by status:
  // cli-operator.test.ts).
  const r = createRedis(REDIS_URL, 'worker');
  await r.set(`${prefix}:started`, '1');
  await closeRedis(r);
});

afterAll(async () => {
  const r = createRedis(REDIS_URL, 'worker');
  await deleteByPattern(r, `${prefix}:*`);
  await closeRedis(r);
});

/** Runs the built CLI with exactly `env`; its exit code and output. */
function runCli(
  bin: string,
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [bin, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d: Buffer) => {
      output += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      output += d.toString();
    });
    child.once('exit', (code) => resolve({ code, output }));
  });
}

describe('report-connector', () => {
  it('exits 2 with one line for an unknown command or option', async () => {
    const a = io(goodEnv);
    expect(await main(['frobnicate'], a)).toBe(2);
    expect(a.stderr).toHaveLength(1);
    const b = io(goodEnv);
    expect(await main(['status', '--nope'], b)).toBe(2);
    expect(b.stderr.join('\n')).toMatch(/--nope/);
  });

  it('exits 1 with one line naming the variable when the configuration is bad', async () => {
    const a = io({ ...goodEnv, ENCRYPTION_KEY: 'too-short' });
    expect(await main(['status'], a)).toBe(1);
    expect(a.stderr).toEqual([expect.stringContaining('ENCRYPTION_KEY')]);
    const b = io({ ...goodEnv, REPORTS_API_URL: '' });
    expect(await main(['status'], b)).toBe(1);
    expect(b.stderr.join('')).toContain('REPORTS_API_URL');
    const c = io({ ...goodEnv, PORT: 'eighty' });
    expect(await main(['status'], c)).toBe(1);
    expect(c.stderr.join('')).toContain('PORT');
  });

  it('status --json prints only JSON on stdout, with the depth of every queue', async () => {
    const a = io(goodEnv);
    expect(await main(['status', '--json'], a)).toBe(0);
    const report = JSON.parse(a.stdout.join('\n')) as {
      installations: unknown[];
      queues: Record<string, Record<string, number>>;
    };
    expect(Object.keys(report.queues).sort()).toEqual(['backfill', 'realtime', 'schedule']);
    for (const q of Object.values(report.queues))
      expect(Object.keys(q).sort()).toEqual(['active', 'delayed', 'failed', 'waiting']);
    expect(report.installations).toEqual([]);
  });

  it('sync without installations says what to do and exits 1', async () => {
    const a = io(goodEnv);
    expect(await main(['sync'], a)).toBe(1);
    expect(a.stderr.join('')).toMatch(/install/i);
  });

  it('demo ends with the before/after table and stops cleanly on Ctrl-C', async () => {
    const bin = await buildWorkerCli();
    // Nothing answers at this REDIS_URL: the demo starts a redis-server of its own and says so.
    const { child, exited, output } = spawnCli(bin, ['demo', '--port', '0', '--companies', '120'], {
      ...process.env,
      REDIS_URL: 'redis://127.0.0.1:9',
      LOG_LEVEL: 'warn',
    });
    try {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`demo did not finish; stdout so far:\n${output.stdout}`)),
          90_000,
        );
        child.stdout.on('data', () => {
          if (output.stdout.includes('Press Ctrl-C')) {
            clearTimeout(timer);
            resolve();
          }
        });
        child.once('exit', () => reject(new Error(`demo exited early:\n${output.stdout}`)));
      });
      expect(output.stderr).toMatch(
        /Nothing answered at redis:\/\/127\.0\.0\.1:9: the demo runs a redis-server of its own/,
      );
      expect(output.stdout).toMatch(/report_score\s+\S+\s+\S+/);
      expect(output.stdout).toMatch(/score\.changed for \S+ reached the CRM record/);
      // Where to try the OAuth install against the local CRM (issue 31).
      expect(output.stdout).toMatch(
        /OAuth install against the local HubSpot: http:\/\/127\.0\.0\.1:\d+\/oauth\/hubspot\/install/,
      );
      // The printed block drives the demo from a fresh environment: the commands as the block writes them.
      const fresh: Record<string, string> = { PATH: process.env.PATH ?? '' };
      for (const [, name, value] of output.stdout.matchAll(/^export (\w+)=(.*)$/gm)) {
        fresh[name!] = value!.replace(/^'(.*)'$/, '$1');
      }
      expect(Object.keys(fresh)).toEqual(
        expect.arrayContaining(['REDIS_PREFIX', 'ENCRYPTION_KEY', 'REPORTS_API_URL']),
      );
      // Commands through npx (a new shell has no report-connector on its PATH), with the block's variables.
      expect(output.stdout).toMatch(/^cd \S+/m);
      expect(Object.keys(fresh)).toEqual(
        expect.arrayContaining(['SANDBOX_PORT', 'INSTALLATION', 'RECORD', 'REPORTS_WEBHOOK_SECRET']),
      );
      const commands = [...output.stdout.matchAll(/^ {2}npx report-connector (.+)$/gm)].map((m) =>
        m[1]!.split(' ').map((a) => a.replace(/^\$(\w+)$/, (_, name: string) => fresh[name] ?? a)),
      );
      expect(commands.map((c) => c[0])).toEqual(['status', 'sync', 'doctor', 'request', 'record']);
      for (const args of commands) {
        const run = await runCli(bin, args, fresh);
        expect(run, args.join(' ')).toMatchObject({ code: 0 });
        // The demo's webhooks work: doctor, given the block, does not say they are refused.
        if (args[0] === 'doctor') expect(run.output).not.toMatch(/WARN.*webhook/i);
      }
      child.kill('SIGINT');
      expect(await exited).toBe(0);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
    // The test's own 90 s wait for the demo (which builds the CLI first) must fit inside vitest's limit.
  }, 150_000);
});

describe('configuration problems and per-command help (issue 31)', () => {
  it('demo says in one line how to get Redis when none answers and none is installed', async () => {
    const bin = await buildWorkerCli();
    const run = await runCli(bin, ['demo', '--port', '0'], {
      PATH: process.env.PATH ?? '',
      REDIS_URL: 'redis://127.0.0.1:9',
      REDIS_SERVER_BIN: '/nonexistent/redis-server',
    });
    expect(run.code).toBe(1);
    expect(run.output.trim().split('\n')).toEqual([
      'Starting the demo...',
      expect.stringMatching(
        /^Nothing answers at redis:\/\/127\.0\.0\.1:9 and no redis-server is installed: install Redis/,
      ),
    ]);
  });

  it('names every missing variable in one message', async () => {
    const a = io({ LOG_LEVEL: 'silent', REPORTS_API_URL: '' });
    expect(await main(['doctor'], { ...a, env: { REDIS_URL, LOG_LEVEL: 'silent' } })).toBe(1);
    const message = a.stderr.join('\n');
    for (const variable of ['ENCRYPTION_KEY', 'ADMIN_TOKEN', 'REPORTS_API_URL'])
      expect(message).toContain(variable);
  });

  it('status reads with Redis and ENCRYPTION_KEY alone', async () => {
    const a = io({ ENCRYPTION_KEY: goodEnv.ENCRYPTION_KEY, LOG_LEVEL: 'silent' });
    expect(await main(['status', '--json'], a)).toBe(0);
    expect(JSON.parse(a.stdout.join(''))).toHaveProperty('installations');
  });

  it.each(['status', 'sync', 'demo', 'request', 'record', 'doctor', 'manifests', 'start'])(
    '%s --help prints its own usage and exits 0',
    async (command) => {
      const a = io({});
      expect(await main([command, '--help'], a)).toBe(0);
      expect(a.stdout.join('\n')).toMatch(new RegExp(`^Usage: report-connector ${command}`));
    },
  );

  it('--help lists demo --companies and the environment', async () => {
    const a = io({});
    expect(await main(['--help'], a)).toBe(0);
    expect(a.stdout.join('\n')).toMatch(/demo .*--companies N/);
    expect(a.stdout.join('\n')).toMatch(/Environment/);
  });
});
