import { describe, expect, it } from 'vitest';
import { escapeHtml } from '../src/admin/html.js';
import { adminRequest } from './support/admin-api.js';
import { adminLogin } from './support/admin-login.js';
import { suiteSystem } from './support/local-system.js';
import { waitFor } from './support/wait.js';

/**
 * What a new RevOps admin met on the installation's pages, over plain HTTP on one HubSpot system: a bulk review
 * decision keeps the search, the CRM API usage shows after a sync, the mass actions and the decision log name
 * runs and records in words, and the requests list shows what a company already has and where it is.
 */

const system = suiteSystem({ crm: 'hubspot', companies: 40, logLevel: 'silent' }, { firstRunEnded: true });
const page = (suffix: string) => `/admin/installations/${system.installationId}${suffix}`;
const get = async (suffix: string) => (await adminRequest(system, page(suffix), { bearer: true })).text;

describe('the admin page, as a new admin meets it', () => {
  it('a bulk decision on a searched review list keeps the search through its confirmation and redirect', async () => {
    const items = await system.ctx.index.reviews.items(system.installationId);
    expect(items.length).toBeGreaterThan(0);
    const item = items[0]!;
    const q = item.recordId;
    // The bulk form on the searched page carries the search.
    const list = await get(`/review?q=${encodeURIComponent(q)}`);
    const bulkForm = /<form id="review-bulk"[\s\S]*?<\/form>/.exec(list)![0];
    expect(bulkForm).toContain(`name="return" value="q=${q}"`);

    const { cookie, csrf } = await adminLogin(system);
    const post = (form: URLSearchParams) =>
      adminRequest(system, page('/review/bulk'), { form, headers: { cookie } });
    const sent = { _csrf: csrf, action: 'reject', page: '1', per: '10', return: `q=${q}` };

    const none = await post(new URLSearchParams(sent));
    expect(none.status).toBe(303);
    expect(none.headers.get('location')).toBe(page(`/review?page=1&q=${q}&done=review-bulk-empty#review`));

    const shown = await post(new URLSearchParams({ ...sent, recordIds: item.recordId }));
    expect(shown.status).toBe(200);
    expect(shown.text).toContain(`name="return" value="q=${q}"`);
    expect(shown.text).toContain(`href="${page(`/review?page=1&amp;q=${q}#review`)}"`);
    const confirm = /name="confirm" value="([^"]+)"/.exec(shown.text)![1]!;
    const done = await post(new URLSearchParams({ ...sent, recordIds: item.recordId, confirm }));
    expect(done.status).toBe(303);
    expect(done.headers.get('location')).toMatch(
      new RegExp(`^${page(`/review\\?page=1&q=${q}&done=mass&mass=m[a-z0-9]+#review`)}$`),
    );
  });

  it('shows the CRM API usage after a sync, in a process whose connectors have gone (or never served it)', async () => {
    // The connectors a sync used are kept half a minute; another process (`serve`) never has them.
    await waitFor(
      'the usage stored',
      async () => (await system.ctx.runtime.crmUsage(system.installationId)) ?? undefined,
      15_000,
    );
    system.ctx.runtime.forget(system.installationId);
    const overview = await get('');
    expect(overview).not.toContain('no reading yet');
    expect(overview).toMatch(/CRM API usage: [\d,]+ of [\d,]+ daily calls used/);
    expect(overview).toContain('as the CRM said on <time');
  });

  it('the requests list shows each company’s domain and country, and what one already has instead of a request', async () => {
    const noMatch = system.recordIds.filter((r) => system.crm.record(r)?.status === 'no_match');
    expect(noMatch.length).toBeGreaterThan(1);
    const [linkedSince, other] = noMatch as [string, string];
    const slug = system.sandbox.listReports().find((r) => r.published)!.slug;
    // Linked by a person in the CRM a moment ago: the connector's list does not know it yet.
    await system.hubspot.setCompanyProperty(linkedSince, 'report_slug', slug);
    // Seeded companies without a report have neither; an admin's CRM has them.
    await system.hubspot.setCompanyProperty(other, 'domain', 'nordvik-tools.example');
    await system.hubspot.setCompanyProperty(other, 'country', 'Norway');
    const html = await get('/requests');
    const itemOf = (recordId: string) =>
      new RegExp(
        `<li class="no-match-item">((?:(?!</li>)[\\s\\S])*?/records/${recordId}"[\\s\\S]*?)</li>`,
      ).exec(html)?.[1] ?? '';
    const linked = itemOf(linkedSince);
    expect(linked).toContain('Has a report now');
    expect(linked).toContain(slug);
    expect(linked).not.toContain('Request a report');
    const plain = itemOf(other);
    expect(plain).toContain('Request a report');
    expect(plain).toContain('<span data-place>nordvik-tools.example · Norway</span>');
  });

  it('the mass actions and the decision log name the run by its kind and time, and records by name', async () => {
    const [run] = await system.ctx.runs.recent(system.installationId, 1);
    expect(run).toBeDefined();
    const { cookie, csrf } = await adminLogin(system);
    const undo = (form: Record<string, string>) =>
      adminRequest(system, page(`/runs/${run!.id}/undo`), {
        form: new URLSearchParams({ _csrf: csrf, ...form }),
        headers: { cookie },
      });
    const shown = await undo({});
    const confirm = /name="confirm" value="([^"]+)"/.exec(shown.text)![1]!;
    expect((await undo({ confirm })).status).toBe(303);

    const links = await get('/links');
    const mass = /<section class="card" aria-labelledby="mass-actions">[\s\S]*?<\/section>/.exec(links)![0];
    expect(mass).not.toContain(run!.id);
    expect(mass).toMatch(/\(the first sync of \d{4}-\d\d-\d\d \d\d:\d\d UTC\)/);
    const log = /<section class="card" aria-labelledby="decisions">[\s\S]*?<\/section>/.exec(links)![0];
    expect(log).not.toContain(`sync ${run!.id}`);
    expect(log).toContain('the first sync of');
    const undone = (await system.ctx.decisions.page(system.installationId, null, 20)).decisions.find(
      (d) => d.action === 'undo',
    )!;
    const name = system.crm.record(undone.recordId)!.name!;
    expect(log).toContain(
      `${escapeHtml(name)}<br><span class="hint">record <a href="${page(`/records/${undone.recordId}`)}"`,
    );
  });
});
