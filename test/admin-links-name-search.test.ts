import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalSystem } from '../local/system.js';
import { NAME_SEARCH_LIMIT, searchByName } from '../src/admin/linked-by-name.js';
import type { CrmConnector, CrmKind } from '../src/crm/connector.js';
import { adminRequest } from './support/admin-api.js';
import { adminLogin } from './support/admin-login.js';
import { startTestSystem, stopTestSystem } from './support/local-system.js';
import { runEnded } from './support/system-state.js';

/**
 * Issue 31: the Links page finds a linked record by part of its name, asked of each local CRM (the connector keeps
 * no names of linked records), and says in one sentence when the CRM cannot be asked.
 */

/** The record ids a Links page lists as linked (each has its unlink form). */
function linkedOnPage(text: string): string[] {
  return [...text.matchAll(/action="\/admin\/installations\/[^/]+\/records\/([^/]+)\/unlink"/g)]
    .map((m) => m[1]!)
    .filter((r) => r !== 'by-id');
}

describe.each(['hubspot', 'salesforce'] as CrmKind[])('Links page search by name on %s', (crm) => {
  let system: LocalSystem;
  let id: string;

  beforeAll(async () => {
    system = await startTestSystem({ crm, companies: 60 });
    id = system.installationId;
    await runEnded(system);
  }, 180_000);

  afterAll(async () => {
    await stopTestSystem(system);
  });

  it('finds a linked record by part of a word of its name, and only linked records whose name holds it', async () => {
    const matched = (await system.ctx.index.statusPage(id, 'matched', 0, 100)).records.map((r) => r.recordId);
    expect(matched.length).toBeGreaterThan(0);
    const target = matched
      .map((r) => system.crm.record(r)!)
      .find((r) => (r.name ?? '').split(/[^\p{L}\p{N}]+/u).some((w) => w.length >= 6))!;
    const word = target.name!.split(/[^\p{L}\p{N}]+/u).find((w) => w.length >= 6)!;
    const part = word.slice(1, 5).toLowerCase();
    const { cookie } = await adminLogin(system);
    const page = await adminRequest(
      system,
      `/admin/installations/${id}/links?linked-q=${encodeURIComponent(part)}`,
      {
        headers: { cookie },
      },
    );
    expect(page.status).toBe(200);
    const listed = linkedOnPage(page.text);
    expect(listed).toContain(target.id);
    for (const r of listed) {
      expect(matched).toContain(r);
      expect(system.crm.record(r)!.name!.toLowerCase()).toContain(part);
    }
    expect(page.text).toMatch(/role="status">\d+ found for “/);
    expect(page.text).not.toContain('data-search-note');
  });

  it('finds nothing for a name no record holds', async () => {
    const found = await searchByName(system.ctx, id, 'matched', 'zzqqxxnothing');
    expect(found).toEqual({ kind: 'found', records: [], capped: false });
  });
});

describe('search by name when the CRM cannot be asked', () => {
  const index = {
    statusesOf: async (_id: string, ids: readonly string[]) => ids.map(() => 'matched' as const),
  };

  it('says so when the installation does not open (not connected)', async () => {
    const runtime = {
      open: async () => {
        throw new Error('disconnected');
      },
    };
    const found = await searchByName({ runtime, index }, 'i1', 'matched', 'acme');
    expect(found).toMatchObject({ kind: 'unavailable', sentence: expect.stringMatching(/not connected/) });
  });

  it('says so when the CRM has no search by name', async () => {
    const connector = {} as CrmConnector;
    const runtime = { open: async () => ({ connector }) as never };
    const found = await searchByName({ runtime, index }, 'i1', 'matched', 'acme');
    expect(found).toMatchObject({
      kind: 'unavailable',
      sentence: expect.stringMatching(/no search by name/),
    });
  });

  it('keeps only records in the status, and says when the CRM answer was capped', async () => {
    const records = Array.from({ length: NAME_SEARCH_LIMIT }, (_, i) => ({ id: `r${i}`, name: `Acme ${i}` }));
    const connector = { findByName: async () => records } as unknown as CrmConnector;
    const statusesOf = async (_id: string, ids: readonly string[]) =>
      ids.map((r) => (r === 'r3' ? ('matched' as const) : ('no_match' as const)));
    const found = await searchByName(
      { runtime: { open: async () => ({ connector }) as never }, index: { statusesOf } },
      'i1',
      'matched',
      'acme',
    );
    expect(found).toEqual({ kind: 'found', records: [{ recordId: 'r3', name: 'Acme 3' }], capped: true });
  });
});
