import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  HUBSPOT_MANIFEST_PLACEHOLDER_APP_URL,
  hubspotProjectFiles,
  writeHubSpotManifests,
} from '../connectors/hubspot/manifest.js';
import { FIELDS, MATCH_STATUSES } from '../src/fields.js';

const COMMITTED = join(import.meta.dirname, '..', 'manifests', 'hubspot');
const REGENERATE = `run npm run manifests -- --app-url ${HUBSPOT_MANIFEST_PLACEHOLDER_APP_URL}`;

describe('HubSpot project manifests', () => {
  const files = hubspotProjectFiles({ appUrl: HUBSPOT_MANIFEST_PLACEHOLDER_APP_URL });

  it.each(Object.keys(files))(
    'committed manifests/hubspot/%s matches the generator (no drift)',
    (relative) => {
      const path = join(COMMITTED, relative);
      expect(existsSync(path), `${relative} is missing: ${REGENERATE}`).toBe(true);
      expect(readFileSync(path, 'utf8'), `${relative} differs from the generator: ${REGENERATE}`).toBe(
        files[relative],
      );
    },
  );

  it('lists every FIELDS entry as a property with the right HubSpot type', () => {
    const { group, properties } = JSON.parse(files['properties.json']!) as {
      group: { name: string };
      properties: {
        name: string;
        type: string;
        fieldType: string;
        groupName: string;
        options?: { value: string }[];
      }[];
    };
    expect(group.name).toBe('report_scores');
    expect(properties.map((p) => p.name)).toEqual(FIELDS.map((f) => f.hubspot));
    for (const p of properties) expect(p.groupName).toBe('report_scores');
    const byName = new Map(properties.map((p) => [p.name, p]));
    expect(byName.get('report_score')).toMatchObject({ type: 'number', fieldType: 'number' });
    expect(byName.get('report_pillars')).toMatchObject({ type: 'string', fieldType: 'textarea' });
    expect(byName.get('report_scored_at')).toMatchObject({ type: 'datetime', fieldType: 'date' });
    expect(byName.get('report_match_status')?.options?.map((o) => o.value)).toEqual([...MATCH_STATUSES]);
  });

  it('declares the OAuth app and the company webhooks for the given app URL', () => {
    const appUrl = 'https://crm.acme.test';
    const generated = hubspotProjectFiles({ appUrl: `${appUrl}/` });
    const project = JSON.parse(generated['hsproject.json']!);
    expect(project).toEqual({ name: 'report-connector', srcDir: 'src', platformVersion: '2026.03' });

    const app = JSON.parse(generated['src/app/app-hsmeta.json']!);
    expect(app.type).toBe('app');
    expect(app.config.auth.type).toBe('oauth');
    expect(app.config.auth.redirectUrls).toEqual([`${appUrl}/oauth/hubspot/callback`]);
    expect(app.config.auth.requiredScopes).toEqual([
      'oauth',
      'crm.objects.companies.read',
      'crm.objects.companies.write',
      'crm.schemas.companies.read',
      'crm.schemas.companies.write',
    ]);
    expect(app.config.permittedUrls.fetch).toEqual([appUrl]);

    const webhooks = JSON.parse(generated['src/app/webhooks/webhooks-hsmeta.json']!);
    expect(webhooks.type).toBe('webhooks');
    expect(webhooks.config.settings.targetUrl).toBe(`${appUrl}/webhooks/hubspot`);
    const subscriptions = webhooks.config.subscriptions.crmObjects as Record<string, unknown>[];
    expect(subscriptions.every((s) => s.objectType === 'company' && s.active === true)).toBe(true);
    expect(subscriptions.map((s) => [s.subscriptionType, s.propertyName ?? null])).toEqual([
      ['object.creation', null],
      ['object.deletion', null],
      ['object.merge', null],
      ['object.propertyChange', 'name'],
      ['object.propertyChange', 'domain'],
      ['object.propertyChange', 'report_slug'],
    ]);
  });

  it('writeHubSpotManifests writes exactly the generated files', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'hs-manifests-'));
    try {
      const written = await writeHubSpotManifests(dir, 'https://x.test');
      const expected = hubspotProjectFiles({ appUrl: 'https://x.test' });
      expect(written.length).toBe(Object.keys(expected).length);
      for (const [relative, content] of Object.entries(expected)) {
        expect(await readFile(join(dir, relative), 'utf8')).toBe(content);
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
