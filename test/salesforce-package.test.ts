import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isPackagingDirectory, ProjectJsonSchema } from '@salesforce/core';
import { ComponentSet, MetadataConverter } from '@salesforce/source-deploy-retrieve';
import { XMLParser } from 'fast-xml-parser';
import { describe, expect, it } from 'vitest';
import {
  PACKAGE_ENV,
  PLACEHOLDER_APP_URL,
  salesforcePackageOptionsFrom,
  writeSalesforceManifests,
} from '../connectors/salesforce/manifest/manifest.js';
import { EXTERNAL_CLIENT_APP, PACKAGE_NAME, SFDX_DIRECTORIES } from '../connectors/salesforce/provider.js';
import { ConfigError } from '../src/env-schema.js';
import { filesUnder } from './support/files-under.js';
import { checkMetadataXml, loadMetadataSchema } from './support/metadata-schema.js';

/**
 * The managed package's offline half: what `sf package version create` would read, checked with Salesforce's
 * own libraries. The Dev Hub steps (namespace, deploy into the source org, retrieving the oauthLink, creating
 * and promoting the version) cannot run here; manifests/salesforce/README.md marks them NEEDS A DEV HUB.
 */

const COMMITTED = join(import.meta.dirname, '..', 'manifests', 'salesforce');
const parser = new XMLParser({ ignoreAttributes: false, parseTagValue: false });
const schema = loadMetadataSchema();
const unordered = { unordered: new Set(['LightningComponentBundle']) };

async function withProject<T>(env: Record<string, string>, body: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), 'sf-package-'));
  try {
    await writeSalesforceManifests(dir, PLACEHOLDER_APP_URL, env);
    return await body(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

describe('sfdx-project.json as the Salesforce CLI reads it', () => {
  it("passes @salesforce/core's project schema, with one packaging directory: the app", async () => {
    const project = JSON.parse(await readFile(join(COMMITTED, 'sfdx-project.json'), 'utf8'));
    const parsed = ProjectJsonSchema.safeParse(project);
    expect(parsed.success, JSON.stringify(parsed.error?.issues)).toBe(true);
    const packaging = project.packageDirectories.filter(isPackagingDirectory);
    expect(packaging).toEqual([
      expect.objectContaining({ path: SFDX_DIRECTORIES.app, package: PACKAGE_NAME, default: true }),
    ]);
    expect(packaging[0].versionNumber).toMatch(/^\d+\.\d+\.\d+\.(NEXT|\d+)$/);
    // No namespace until one is registered and linked (a Dev Hub step).
    expect(project.namespace).toBe('');
  });

  it('the schema check can fail: a package directory without a version number is refused', () => {
    const parsed = ProjectJsonSchema.safeParse({
      packageDirectories: [{ path: 'app', package: 'Report Connector', default: true }],
    });
    expect(parsed.success).toBe(false);
  });
});

describe('the package directory', () => {
  it('holds the app and its OAuth settings only; the global settings and the policies stay outside', async () => {
    await withProject({}, async (dir) => {
      const components = ComponentSet.fromSource(join(dir, SFDX_DIRECTORIES.app));
      expect(
        components
          .toArray()
          .map((c) => `${c.type.name}:${c.fullName}`)
          .sort(),
      ).toEqual([
        `ExternalClientApplication:${EXTERNAL_CLIENT_APP.name}`,
        `ExtlClntAppOauthSettings:${EXTERNAL_CLIENT_APP.oauthSettingsName}`,
      ]);
      const owner = ComponentSet.fromSource(join(dir, SFDX_DIRECTORIES.owner));
      expect(
        owner
          .toArray()
          .map((c) => c.type.name)
          .sort(),
      ).toEqual(['ExtlClntAppGlobalOauthSettings', 'ExtlClntAppOauthConfigurablePolicies']);
    });
  });

  it('carries the namespace and the oauthLink the source org made, and converts with them', async () => {
    const env = {
      [PACKAGE_ENV.namespace]: 'reportconn',
      [PACKAGE_ENV.oauthLink]: '00Dxx0000001gEREAY:0Hxxx00000001',
    };
    await withProject(env, async (dir) => {
      const project = JSON.parse(await readFile(join(dir, 'sfdx-project.json'), 'utf8'));
      expect(project.namespace).toBe('reportconn');
      expect(ProjectJsonSchema.safeParse(project).success).toBe(true);

      const settingsPath = `${SFDX_DIRECTORIES.app}/main/default/extlClntAppOauthSettings/${EXTERNAL_CLIENT_APP.oauthSettingsName}.ecaOauth-meta.xml`;
      const settings = await readFile(join(dir, settingsPath), 'utf8');
      expect(parser.parse(settings).ExtlClntAppOauthSettings.oauthLink).toBe(env[PACKAGE_ENV.oauthLink]);
      // Every file, the link included, is still what the Metadata API's types allow.
      for (const file of (await filesUnder(dir)).filter((f) => f.endsWith('.xml'))) {
        expect(checkMetadataXml(schema, await readFile(join(dir, file), 'utf8'), file, unordered)).toEqual(
          [],
        );
      }

      const converted = await new MetadataConverter().convert(
        ComponentSet.fromSource(join(dir, SFDX_DIRECTORIES.app)),
        'metadata',
        { type: 'directory', outputDirectory: join(dir, 'mdapi'), genUniqueDir: false },
      );
      const packaged = await readFile(
        join(
          converted.packagePath!,
          `extlClntAppOauthSettings/${EXTERNAL_CLIENT_APP.oauthSettingsName}.ecaOauth`,
        ),
        'utf8',
      );
      expect(parser.parse(packaged).ExtlClntAppOauthSettings.oauthLink).toBe(env[PACKAGE_ENV.oauthLink]);
    });
  });

  it('has no oauthLink before the source org made one', async () => {
    await withProject({}, async (dir) => {
      const settings = await readFile(
        join(
          dir,
          `${SFDX_DIRECTORIES.app}/main/default/extlClntAppOauthSettings/${EXTERNAL_CLIENT_APP.oauthSettingsName}.ecaOauth-meta.xml`,
        ),
        'utf8',
      );
      expect(settings).not.toContain('oauthLink');
    });
  });

  it('refuses a namespace or an oauthLink it could not write as Salesforce needs them', () => {
    expect(() => salesforcePackageOptionsFrom({ [PACKAGE_ENV.namespace]: 'report_conn' })).toThrow(
      ConfigError,
    );
    expect(() => salesforcePackageOptionsFrom({ [PACKAGE_ENV.namespace]: '1report' })).toThrow(ConfigError);
    expect(() => salesforcePackageOptionsFrom({ [PACKAGE_ENV.oauthLink]: 'two words' })).toThrow(ConfigError);
    expect(salesforcePackageOptionsFrom({ [PACKAGE_ENV.namespace]: ' ' })).toEqual({});
  });
});

describe("the package steps in the project's README", () => {
  it('come in order, each Dev Hub step marked, naming only directories and components the project has', async () => {
    const readme = await readFile(join(COMMITTED, 'README.md'), 'utf8');
    const section = readme.slice(readme.indexOf('## Many orgs, one packaged app'));
    const steps = [
      'Enable Dev Hub',
      'Link Namespace',
      `sf project deploy start --source-dir ${SFDX_DIRECTORIES.app} --source-dir ${SFDX_DIRECTORIES.owner}`,
      `sf project retrieve start --metadata ExtlClntAppOauthSettings:${EXTERNAL_CLIENT_APP.oauthSettingsName}`,
      `${PACKAGE_ENV.oauthLink}=`,
      `sf package create --name "${PACKAGE_NAME}" --package-type Managed --path ${SFDX_DIRECTORIES.app}`,
      'sf package version create --package 0Ho',
      'sf package version promote --package 04t',
      'sf package install --package 04t',
    ];
    const at = steps.map((s) => section.indexOf(s));
    expect(
      at.every((i) => i >= 0),
      JSON.stringify(steps.filter((_, i) => at[i]! < 0)),
    ).toBe(true);
    expect([...at].sort((a, b) => a - b)).toEqual(at);
    // Steps 1 to 6 need a Dev Hub, and say so; step 7 runs in each customer org.
    const numbered = [...section.matchAll(/^(\d)\. (.*)$/gm)].map((m) => [Number(m[1]), m[2]!] as const);
    expect(numbered.map(([n]) => n)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    for (const [n, text] of numbered) expect(text.startsWith('NEEDS A DEV HUB'), `step ${n}`).toBe(n <= 6);
    // Every --source-dir / --path names a directory of sfdx-project.json.
    const project = JSON.parse(await readFile(join(COMMITTED, 'sfdx-project.json'), 'utf8'));
    const dirs = new Set(project.packageDirectories.map((d: { path: string }) => d.path));
    for (const m of section.matchAll(/--(?:source-dir|path) (\S+)/g)) expect(dirs.has(m[1])).toBe(true);
    // No setting the current Metadata API lacks (ExternalClientAppSettings has no enableExternalClientApps).
    expect(readme).not.toContain('enableExternalClientApps');
    expect(schema.complex.get('ExternalClientAppSettings')?.order).not.toContain('enableExternalClientApps');
  });
});
