import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import {
  getProjectMetadata,
  isKnownPlatformVersion,
  parseProjectConfig,
  validateProjectConfig,
} from '@hubspot/project-parsing-lib/projects';
import { translateForLocalDev } from '@hubspot/project-parsing-lib/translate';
import { validateUid } from '@hubspot/project-parsing-lib/uid';
import { describe, expect, it } from 'vitest';
import { HUBSPOT_FIELDS } from '../connectors/hubspot/fields/field-names.js';
import {
  HUBSPOT_MANIFEST_PLACEHOLDER_APP_URL,
  hubspotAppAuthFrom,
  hubspotPlatformVersionFrom,
  hubspotProjectFiles,
  writeHubSpotManifests,
} from '../connectors/hubspot/manifest/manifest.js';
import { HUBSPOT_PLATFORM_VERSIONS } from '../connectors/hubspot/provider.js';
import { MATCH_STATUSES } from '../src/fields.js';

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
    expect(properties.map((p) => p.name)).toEqual(HUBSPOT_FIELDS.map((f) => f.hubspot));
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
    expect(project).toEqual({ name: 'report-connector', srcDir: 'src', platformVersion: '2026.09' });

    const app = JSON.parse(generated['src/app/app-hsmeta.json']!);
    expect(app.type).toBe('app');
    expect(app.config.auth.type).toBe('oauth');
    expect(app.config.auth.redirectUrls).toEqual([
      `${appUrl}/oauth/hubspot/callback`,
      `${appUrl}/oauth/hubspot-card/callback`,
    ]);
    expect(app.config.auth.requiredScopes).toEqual([
      'oauth',
      'crm.objects.companies.read',
      'crm.objects.companies.write',
      'crm.schemas.companies.write',
    ]);
    expect(app.config.permittedUrls).toEqual({ fetch: [], iframe: [appUrl], img: [] });

    const webhooks = JSON.parse(generated['src/app/webhooks/webhooks-hsmeta.json']!);
    expect(webhooks.type).toBe('webhooks');
    expect(webhooks.config.settings.targetUrl).toBe(`${appUrl}/webhooks/hubspot`);
    const subscriptions = webhooks.config.subscriptions.crmObjects as Record<string, unknown>[];
    expect(subscriptions.every((s) => s.objectType === 'company' && s.active === true)).toBe(true);
    expect(subscriptions.map((s) => [s.subscriptionType, s.propertyName ?? null])).toEqual([
      ['object.creation', null],
      ['object.deletion', null],
      ['object.merge', null],
      ['object.restore', null],
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

/**
 * HubSpot's own parser (the library behind `hs project upload`) reads the generated project. Offline it parses
 * and places every component; the JSON-schema check of each component's config needs HubSpot's schema
 * endpoint and an account, so it runs at upload time, not here.
 */
describe('the HubSpot project as @hubspot/project-parsing-lib reads it', () => {
  async function parse(files: Record<string, string>) {
    const dir = await mkdtemp(join(tmpdir(), 'hs-parse-'));
    for (const [relative, content] of Object.entries(files)) {
      await mkdir(dirname(join(dir, relative)), { recursive: true });
      await writeFile(join(dir, relative), content, 'utf8');
    }
    try {
      const config = parseProjectConfig(dir);
      validateProjectConfig(config, dir);
      const context = { projectSourceDir: join(dir, config.srcDir), platformVersion: config.platformVersion };
      const { intermediateRepresentation, skippedHsMetaFiles } = await translateForLocalDev(context, {
        skipValidation: true,
      });
      const metadata = await getProjectMetadata(context.projectSourceDir);
      return {
        config,
        nodes: intermediateRepresentation.intermediateNodesIndexedByUid,
        skippedHsMetaFiles,
        metadata,
      };
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }

  it('parses the generated project with no parsing errors, on a platform version it knows', async () => {
    const { config, nodes, skippedHsMetaFiles, metadata } = await parse(
      hubspotProjectFiles({ appUrl: 'https://crm.acme.test' }),
    );
    expect(isKnownPlatformVersion(config.platformVersion)).toBe(true);
    expect(skippedHsMetaFiles).toEqual([]);
    expect(Object.fromEntries(Object.entries(nodes).map(([uid, n]) => [uid, n.componentType]))).toEqual({
      report_connector_app: 'APPLICATION',
      report_connector_webhooks: 'WEBHOOKS',
      report_connector_card_tab: 'CARD',
      report_connector_card_sidebar: 'CARD',
    });
    for (const [uid, node] of Object.entries(nodes)) {
      expect(node.localDev.parsingErrors, uid).toEqual([]);
      expect(validateUid(uid), uid).toBeUndefined();
    }
    for (const [type, component] of Object.entries(metadata.components)) {
      if (component.maxCount !== null) expect(component.count, type).toBeLessThanOrEqual(component.maxCount);
    }
  });

  it.each(HUBSPOT_PLATFORM_VERSIONS)(
    'parses the project written for platform %s (HUBSPOT_PLATFORM_VERSION)',
    async (version) => {
      const dir = await mkdtemp(join(tmpdir(), 'hs-version-'));
      try {
        await writeHubSpotManifests(dir, 'https://crm.acme.test', { HUBSPOT_PLATFORM_VERSION: version });
        const files = Object.fromEntries(
          await Promise.all(
            Object.keys(hubspotProjectFiles({ appUrl: 'https://crm.acme.test' })).map(
              async (relative) => [relative, await readFile(join(dir, relative), 'utf8')] as const,
            ),
          ),
        );
        const { config, nodes } = await parse(files);
        expect(config.platformVersion).toBe(version);
        expect(isKnownPlatformVersion(config.platformVersion)).toBe(true);
        for (const [uid, node] of Object.entries(nodes)) expect(node.localDev.parsingErrors, uid).toEqual([]);
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    },
  );

  it('writes a privately distributed static-auth app for one portal (HUBSPOT_APP_AUTH=static)', async () => {
    const files = hubspotProjectFiles({ appUrl: 'https://crm.acme.test', auth: 'static' });
    const app = JSON.parse(files['src/app/app-hsmeta.json']!);
    expect(app.config.distribution).toBe('private');
    expect(app.config.auth).toEqual({
      type: 'static',
      requiredScopes: [
        'oauth',
        'crm.objects.companies.read',
        'crm.objects.companies.write',
        'crm.schemas.companies.write',
      ],
      optionalScopes: ['crm.objects.contacts.write'],
    });
    const { nodes } = await parse(files);
    for (const [uid, node] of Object.entries(nodes)) expect(node.localDev.parsingErrors, uid).toEqual([]);
    expect(() => hubspotAppAuthFrom({ HUBSPOT_APP_AUTH: 'private-app' })).toThrow(/oauth or static/);
  });

  it('refuses a platform version the generator does not write', () => {
    expect(() => hubspotPlatformVersionFrom({ HUBSPOT_PLATFORM_VERSION: '2025.2' })).toThrow(
      /2026.09 or 2026.03/,
    );
    expect(hubspotPlatformVersionFrom({})).toBe('2026.09');
  });

  it('tells a broken component file apart, so the check above can fail', async () => {
    const files = hubspotProjectFiles({ appUrl: 'https://crm.acme.test' });
    const types = async (webhooks: string) => {
      const { nodes } = await parse({ ...files, 'src/app/webhooks/webhooks-hsmeta.json': webhooks });
      return Object.fromEntries(Object.entries(nodes).map(([uid, n]) => [uid, n.componentType]));
    };
    // Not JSON: the component is not read at all. No type: HubSpot cannot tell what it is.
    expect(await types('{"uid": "report_connector_webhooks", "config": ')).toEqual({
      report_connector_app: 'APPLICATION',
      report_connector_card_tab: 'CARD',
      report_connector_card_sidebar: 'CARD',
    });
    expect(
      (await types('{"uid": "report_connector_webhooks", "config": {}}')).report_connector_webhooks,
    ).not.toBe('WEBHOOKS');
  });
});
