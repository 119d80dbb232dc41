import { spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliBlock } from '../src/cli/commands/demo.js';
import { checkLine, withFixWhereNeeded } from '../src/cli/commands/doctor.js';
import { previewReport, SKIPPED_MEANS, summaryLine } from '../src/cli/commands/sync.js';
import { main } from '../src/cli/main.js';
import { InstallationStore } from '../src/installations/store.js';
import { crmKind } from '../src/providers.js';
import { closeRedis, createRedis, deleteByPattern, type RedisClient } from '../src/redis.js';
import { SecretBox } from '../src/util/secretbox.js';
import { capturedIo, runBuiltCli } from './support/cli-run.js';
import { REDIS_URL } from './support/redis-url.js';
import { buildWorkerCli } from './support/worker-process.js';

/**
 * The CLI an operator runs by hand: output for people, logs only when asked, and a wrong REDIS_PREFIX or
 * ENCRYPTION_KEY said as such with a non-zero exit instead of an empty or half-read answer.
 */

const run = randomUUID().slice(0, 8);
const usedPrefix = `rc-cliop-${run}`;
const emptyPrefix = `rc-cliop-empty-${run}`;
const tracePrefix = `rc-cliop-trace-${run}`;
const key = randomBytes(32);
const otherKey = randomBytes(32);

function io(env: Record<string, string>) {
  return capturedIo({ REDIS_URL, REPORTS_API_URL: 'http://127.0.0.1:9/api', LOG_LEVEL: 'silent', ...env });
}

const envFor = (prefix: string, k: Buffer) => ({
  REDIS_PREFIX: prefix,
  ENCRYPTION_KEY: k.toString('base64'),
});

let redis: RedisClient;
let installationId: string;

beforeAll(async () => {
  redis = createRedis(REDIS_URL, 'worker');
  const store = new InstallationStore(redis, new SecretBox(key), usedPrefix);
  const inst = await store.upsert({
    crm: crmKind('hubspot'),
    externalId: `portal-${run}`,
    mode: 'token',
    tokens: { accessToken: 'pat-secret' },
  });
  installationId = inst.id;
});

afterAll(async () => {
  for (const p of [usedPrefix, emptyPrefix, tracePrefix]) await deleteByPattern(redis, `${p}:*`);
  await closeRedis(redis);
});

/** The CommonJS packages a child process has loaded after importing `module` (a built file). */
function packagesLoadedBy(module: string): Promise<string[]> {
  const script = `import(${JSON.stringify(module)}).then(() => {
    const M = require('node:module');
    const names = new Set();
    for (const k of Object.keys(M._cache)) {
      const m = /node_modules\\/((?:@[^/]+\\/)?[^/]+)/.exec(k);
      if (m) names.add(m[1]);
    }
    process.stdout.write(JSON.stringify([...names]));
  })`;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    child.once('exit', (code) =>
      code === 0 ? resolve(JSON.parse(out) as string[]) : reject(new Error(`exit ${code}`)),
    );
  });
}

describe('the operator’s CLI', () => {
  it('loads a command’s modules only when it runs: no queue library for --help, no CRM client for status', async () => {
    const bin = await buildWorkerCli();
    const cli = dirname(bin);
    const forMain = await packagesLoadedBy(join(cli, 'main.js'));
    expect(forMain).not.toContain('bullmq');
    expect(forMain).not.toContain('express');
    const forStatus = await packagesLoadedBy(join(cli, 'commands', 'status.js'));
    expect(forStatus).toContain('bullmq');
    expect(forStatus).not.toContain('jsforce');
    expect(forStatus).not.toContain('@hubspot/api-client');
  }, 120_000);

  it('status prints for people on stdout and logs nothing unless --verbose', async () => {
    const bin = await buildWorkerCli();
    const env = {
      REDIS_URL,
      REPORTS_API_URL: 'http://127.0.0.1:9/api',
      PATH: process.env.PATH ?? '',
      ...envFor(usedPrefix, key),
    };
    const quiet = await runBuiltCli(bin, ['status'], env);
    expect(quiet.code, quiet.stderr).toBe(0);
    expect(quiet.stdout).toContain(installationId);
    expect(quiet.stderr).not.toMatch(/"level":/);
    const verbose = await runBuiltCli(bin, ['status', '--verbose'], env);
    expect(verbose.code, verbose.stderr).toBe(0);
    expect(verbose.stderr).toMatch(/"level":30/);
  }, 120_000);

  it('status under a prefix nothing was ever stored under exits 1 saying to check REDIS_PREFIX', async () => {
    const a = io(envFor(emptyPrefix, key));
    expect(await main(['status'], a)).toBe(1);
    expect(a.stderr.join('\n')).toMatch(/REDIS_PREFIX "rc-cliop-empty-[^"]+".*check REDIS_PREFIX/);
    expect(a.stdout).toEqual([]);
    // Asked again (the first run opened the queues, which writes their own small keys): still said.
    const again = io(envFor(emptyPrefix, key));
    expect(await main(['status'], again)).toBe(1);
    // A prefix a deployment used, with no installation (yet, or any more): the usual answer.
    await redis.set(`${tracePrefix}:schema-version`, '1');
    const b = io(envFor(tracePrefix, key));
    expect(await main(['status'], b)).toBe(0);
    expect(b.stdout.join('\n')).toContain('No installations yet');
  });

  it('record and status with another ENCRYPTION_KEY exit 1 saying to check ENCRYPTION_KEY', async () => {
    const r = io(envFor(usedPrefix, otherKey));
    expect(await main(['record', '--installation', installationId, '--record', '1'], r)).toBe(1);
    expect(r.stderr.join('\n')).toMatch(
      /cannot be decrypted with this ENCRYPTION_KEY: check that ENCRYPTION_KEY/,
    );
    expect(r.stdout).toEqual([]);
    const s = io(envFor(usedPrefix, otherKey));
    expect(await main(['status'], s)).toBe(1);
    expect(s.stderr.join('\n')).toContain(`installation ${installationId} cannot be decrypted`);
    const ok = io(envFor(usedPrefix, key));
    expect(await main(['status'], ok)).toBe(0);
    expect(ok.stderr).toEqual([]);
  });
});

describe('the demo’s first line and its environment block', () => {
  it('says it is starting before anything else', async () => {
    const a = io({});
    expect(await main(['demo', '--crm', 'nope'], a)).toBe(2);
    expect(a.stderr[0]).toBe('Starting the demo...');
  });

  it('carries what the README’s demo commands use, and commands that work in a new shell', () => {
    const records = new Map([
      ['11', { status: 'matched' }],
      ['12', { status: 'no_match' }],
    ]);
    const block = cliBlock(
      { PATH: '/usr/bin', LOG_LEVEL: 'info', REDIS_PREFIX: 'rc-demo-1', ADMIN_TOKEN: 'tok en' },
      {
        installationId: 'hubspot-1',
        recordIds: ['11', '12'],
        crm: { record: (id: string) => records.get(id) } as unknown as Parameters<typeof cliBlock>[1]['crm'],
        sandboxUrl: 'http://127.0.0.1:40123/api',
        webhookSecrets: ['whsec_abc'],
      },
      '/srv/report connector',
    );
    const lines = block.split('\n');
    expect(lines[1]).toBe("cd '/srv/report connector'");
    expect(lines).toEqual(
      expect.arrayContaining([
        'export REDIS_PREFIX=rc-demo-1',
        "export ADMIN_TOKEN='tok en'",
        'export REPORTS_WEBHOOK_SECRET=whsec_abc',
        'export SANDBOX_PORT=40123',
        'export INSTALLATION=hubspot-1',
        'export RECORD=12',
        '  npx report-connector doctor',
      ]),
    );
    expect(block).not.toMatch(/PATH=|LOG_LEVEL=/);
    expect(block).not.toMatch(/^ {2}report-connector /m);
  });
});

describe('sync --wait’s summary', () => {
  const statuses = (matched: number, review: number, none: number) => ({
    matched,
    needs_review: review,
    no_match: none,
    not_published: 0,
    requested: 0,
    error: 0,
  });
  const run = (skipped: number) =>
    ({
      state: 'done',
      installationId: 'hubspot-1',
      totals: {
        records: 60,
        linked: 3,
        written: 5,
        unchanged: 0,
        skipped,
        failed: 0,
        statuses: statuses(3, 0, 2),
      },
    }) as unknown as Parameters<typeof summaryLine>[0];

  it('labels this run’s counts and the overall ones, and says what skipped means', () => {
    const text = summaryLine(run(55), statuses(210, 28, 29));
    expect(text).toMatch(
      /^Sync finished for hubspot-1\. This run: 60 records read, .*55 skipped.*this run's records by status: matched 3, needs review 0, no match 2/,
    );
    expect(text).toContain(`\n  skipped: ${SKIPPED_MEANS}`);
    expect(text).toMatch(/\nOverall, every record of hubspot-1: matched 210, needs review 28, no match 29/);
    expect(summaryLine(run(0))).not.toMatch(/skipped:|Overall/);
  });
});

describe('doctor’s lines', () => {
  it('says a fix under a FAIL or a WARN, never under an ok line', () => {
    const fix = 'give the integration user permission to manage and edit the connector fields';
    const lines = withFixWhereNeeded([
      { name: 'p fields', ok: true, detail: '15 present', fix },
      { name: 'p fields', ok: false, detail: 'cannot create', fix },
      { name: 'p read access', ok: true, warn: true, detail: 'partial', fix },
    ]).map(checkLine);
    expect(lines[0]).toBe('ok   p fields: 15 present');
    expect(lines[1]).toBe(`FAIL p fields: cannot create\n     fix: ${fix}`);
    expect(lines[2]).toBe(`WARN p read access: partial\n     fix: ${fix}`);
  });
});

describe('sync --preview’s lists', () => {
  it('say how many more records a cut list leaves out', () => {
    const text = previewReport({
      state: 'done',
      installationId: 'hubspot-1',
      totals: {
        records: 40,
        wouldWrite: 40,
        unchanged: 0,
        failed: 0,
        statuses: { matched: 25, needs_review: 2, no_match: 13, not_published: 0, requested: 0, error: 0 },
      },
      samples: [
        { recordId: '1', name: 'A', status: 'matched', slug: 'a', candidates: [] },
        { recordId: '2', name: 'B', status: 'matched', slug: 'b', candidates: [] },
        { recordId: '3', name: 'C', status: 'needs_review', slug: null, candidates: ['c1', 'c2'] },
        { recordId: '4', name: 'D', status: 'needs_review', slug: null, candidates: ['d1'] },
      ],
    } as unknown as Parameters<typeof previewReport>[0]);
    const lines = text.split('\n');
    expect(lines).toContain('    … and 23 more');
    expect(lines.indexOf('  matched: 25')).toBeLessThan(lines.indexOf('    … and 23 more'));
    // A list shown whole says nothing more; a status without samples shows its count alone.
    expect(text.match(/… and/g)).toHaveLength(1);
    expect(lines).toContain('  no_match: 13');
  });
});
