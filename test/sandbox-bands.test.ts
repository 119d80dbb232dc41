import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sandboxBand } from '../src/sandbox/bands.js';
import { createSandbox, type ListeningSandbox, type ReportSandbox } from '../src/sandbox/index.js';

/**
 * One band rule within the sandbox (and so within the demo): a score the sandbox is told to change without a
 * band, or a report it publishes for a submission, takes the band of the rule its fixtures were made with.
 */

let sandbox: ReportSandbox;
let api: ListeningSandbox;

beforeAll(async () => {
  sandbox = createSandbox();
  api = await sandbox.listen(0);
});

afterAll(async () => {
  await api.close();
});

async function submit(name: string): Promise<string> {
  const res = await fetch(`${api.url}/v1/submissions`, {
    method: 'POST',
    headers: { authorization: 'Bearer sk_sandbox_write', 'content-type': 'application/json' },
    body: JSON.stringify({ name }),
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { id: string }).id;
}

describe('the sandbox’s bands', () => {
  it('the fixtures follow the rule wherever they carry one of its bands', () => {
    const ruled = sandbox
      .listReports()
      .filter((r) => ['exceptional', 'strong', 'moderate', 'weak'].includes(r.score.band));
    expect(ruled.length).toBeGreaterThan(100);
    for (const r of ruled) expect(r.score.band, r.slug).toBe(sandboxBand(r.score.overall));
  });

  it('a score changed without a band takes the band of the new score; a band given is kept', () => {
    const report = sandbox.listReports().find((r) => r.published && r.score.band === 'moderate')!;
    const bandAfter = (patch: unknown) => {
      sandbox.updateReport(report.slug, patch);
      return sandbox.getReport(report.slug)?.score.band;
    };
    expect(bandAfter({ score: { overall: 77.7 } })).toBe('strong');
    expect(bandAfter({ score: { overall: 71 } })).toBe('moderate');
    expect(bandAfter({ score: { overall: 71, band: 'Tier 2' } })).toBe('Tier 2');
  });

  it('a report published for a submission has the band of its score', async () => {
    const strong = sandbox.publishSubmission(await submit('Quillfeather Lantern Works'), {
      score: { overall: 81.5 },
    });
    expect(strong.report.score.band).toBe('strong');
    const plain = sandbox.publishSubmission(await submit('Morrowgate Rope Guild'), {
      score: { overall: 71.25 },
    });
    expect(plain.report.score.band).toBe('moderate');
  });
});

describe('the slug of a report published for a submission', () => {
  it('comes from the domain, or the submission, for a name without Latin letters', async () => {
    const byDomain = await fetch(`${api.url}/v1/submissions`, {
      method: 'POST',
      headers: { authorization: 'Bearer sk_sandbox_write', 'content-type': 'application/json' },
      body: JSON.stringify({ name: '株式会社ひかり精工', domain: 'https://www.hikari-seiko.co.jp' }),
    });
    const withDomain = ((await byDomain.json()) as { id: string }).id;
    expect(sandbox.publishSubmission(withDomain).report.slug).toBe('hikari-seiko');
    const bare = await submit('株式会社つばさ');
    const slug = sandbox.publishSubmission(bare).report.slug;
    expect(slug).not.toBe('submitted-organisation');
    expect(slug).toMatch(/^report-/);
  });
});
