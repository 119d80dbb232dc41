import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { markGenerated } from '../../../src/crm/generated-mark.js';
import { PUBLIC_PAGE_PATHS, supportEmailFor } from '../../../src/crm/public-pages.js';
import { ConfigError } from '../../../src/env-schema.js';
import { HUBSPOT_CARD_CALLBACK_PATH } from '../card/ui/card-paths.js';
import { hubspotField } from '../fields/field-names.js';
import { hubspotPropertyDefinitions, hubspotPropertyGroup } from '../fields/field-types.js';
import { HUBSPOT_CALLBACK_PATH } from '../oauth/oauth-flow.js';
import {
  HUBSPOT_NOTE_SCOPES,
  HUBSPOT_PLATFORM_VERSION,
  HUBSPOT_PLATFORM_VERSIONS,
  HUBSPOT_SCOPES,
  type HubSpotPlatformVersion,
} from '../provider.js';
import { HUBSPOT_WEBHOOK_PATH } from '../webhooks/webhook-routes.js';
import { hubspotCardFiles } from './card-files.js';

/**
 * The HubSpot developer project (platform 2026.09 by default, 2026.03 on request) for the public app, generated from the same code that the
 * OAuth routes, the webhook receiver and `ensureFields` use, so the app HubSpot knows cannot drift from the
 * app that runs. The committed copy in manifests/hubspot/ uses the placeholder URL below: regenerate with your
 * `APP_URL` (`npm run manifests`) before `hs project upload`.
 */

export const HUBSPOT_MANIFEST_PLACEHOLDER_APP_URL = 'https://report-connector.example.com';

export interface HubSpotManifestOptions {
  /** `APP_URL`, without a trailing slash. */
  appUrl: string;
  platformVersion?: HubSpotPlatformVersion;
  /**
   * `oauth` (default): a marketplace-distributed app any portal installs through the connector's OAuth routes.
   * `static`: a privately distributed app with a static access token for one portal (`HUBSPOT_ACCESS_TOKEN`),
   * what replaces a legacy private app; its webhooks are signed with the app's client secret as well.
   */
  auth?: 'oauth' | 'static';
}

/** `HUBSPOT_APP_AUTH` from the environment: `oauth` (default) or `static`. */
export function hubspotAppAuthFrom(
  env: Readonly<Record<string, string | undefined>> = {},
): 'oauth' | 'static' {
  const asked = env.HUBSPOT_APP_AUTH?.trim();
  if (!asked || asked === 'oauth') return 'oauth';
  if (asked === 'static') return 'static';
  throw new ConfigError('HUBSPOT_APP_AUTH', `is ${asked}, not an app auth type: use oauth or static`);
}

/** `HUBSPOT_PLATFORM_VERSION` from the environment, checked against the versions the generator supports. */
export function hubspotPlatformVersionFrom(
  env: Readonly<Record<string, string | undefined>> = {},
): HubSpotPlatformVersion {
  const asked = env.HUBSPOT_PLATFORM_VERSION?.trim();
  if (!asked) return HUBSPOT_PLATFORM_VERSION;
  const known = HUBSPOT_PLATFORM_VERSIONS.find((v) => v === asked);
  if (!known) {
    throw new ConfigError(
      'HUBSPOT_PLATFORM_VERSION',
      `is ${asked}, not one the generator writes: use ${HUBSPOT_PLATFORM_VERSIONS.join(' or ')}`,
    );
  }
  return known;
}

const PROJECT_NAME = 'report-connector';
const APP_UID = 'report_connector_app';
const WEBHOOKS_UID = 'report_connector_webhooks';

/** Company events the connector acts on (see webhook-events.ts). */
function companySubscriptions(): Record<string, unknown>[] {
  const object = (subscriptionType: string, propertyName?: string) => ({
    subscriptionType,
    objectType: 'company',
    ...(propertyName ? { propertyName } : {}),
    active: true,
  });
  return [
    object('object.creation'),
    object('object.deletion'),
    object('object.merge'),
    object('object.restore'),
    object('object.propertyChange', 'name'),
    object('object.propertyChange', 'domain'),
    object('object.propertyChange', hubspotField('slug').hubspot),
  ];
}

function json(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

/** This generator, as the generated files' first line names it. */
const HUBSPOT_MANIFEST_SOURCE = 'connectors/hubspot/manifest/manifest.ts';

/** Relative path (under manifests/hubspot/) -> file content. */
export function hubspotProjectFiles(options: HubSpotManifestOptions): Record<string, string> {
  const appUrl = options.appUrl.replace(/\/+$/, '');
  const card = hubspotCardFiles(appUrl);
  const files: Record<string, string> = {
    'hsproject.json': json({
      name: PROJECT_NAME,
      srcDir: 'src',
      platformVersion: options.platformVersion ?? HUBSPOT_PLATFORM_VERSION,
    }),
    'src/app/app-hsmeta.json': json({
      uid: APP_UID,
      type: 'app',
      config: {
        name: 'Report scores',
        description:
          'Links each company to its published report and keeps the report score, band and verification on the company record.',
        ...(options.auth === 'static'
          ? {
              distribution: 'private',
              auth: {
                type: 'static',
                requiredScopes: [...HUBSPOT_SCOPES],
                optionalScopes: [...HUBSPOT_NOTE_SCOPES],
              },
            }
          : {
              distribution: 'marketplace',
              auth: {
                type: 'oauth',
                // The install's callback, and the card's sign-in (a seller proving who acts on a company).
                redirectUrls: [`${appUrl}${HUBSPOT_CALLBACK_PATH}`, `${appUrl}${HUBSPOT_CARD_CALLBACK_PATH}`],
                requiredScopes: [...HUBSPOT_SCOPES],
                optionalScopes: [...HUBSPOT_NOTE_SCOPES],
                conditionallyRequiredScopes: [],
              },
            }),
        // The card calls nothing (it reads the record through HubSpot); it opens the connector's sign-in page.
        permittedUrls: { fetch: [], iframe: [appUrl], img: [] },
        support: {
          supportEmail: supportEmailFor(appUrl),
          // Public pages (a setup guide behind a sign-in is refused by HubSpot's review), one URL each.
          documentationUrl: `${appUrl}${PUBLIC_PAGE_PATHS.setup}`,
          supportUrl: `${appUrl}${PUBLIC_PAGE_PATHS.support}`,
        },
      },
    }),
    'src/app/webhooks/webhooks-hsmeta.json': json({
      uid: WEBHOOKS_UID,
      type: 'webhooks',
      config: {
        settings: { targetUrl: `${appUrl}${HUBSPOT_WEBHOOK_PATH}`, maxConcurrentRequests: 10 },
        subscriptions: { crmObjects: companySubscriptions() },
      },
    }),
    // The app card on company records (connectors/hubspot/card/ui/) and its components, marked where written.
    ...card,
    // Not part of the HubSpot project (it lies outside srcDir): the exact property definitions the connector
    // sends, for review and for creating them by hand.
    'properties.json': json({ group: hubspotPropertyGroup(), properties: hubspotPropertyDefinitions() }),
  };
  for (const [path, content] of Object.entries(files)) {
    if (!(path in card)) files[path] = markGenerated(path, content, { generator: HUBSPOT_MANIFEST_SOURCE });
  }
  return files;
}

/** Writes the project under `dir`; returns the paths written. `npm run manifests` calls this. */
export async function writeHubSpotManifests(
  dir: string,
  appUrl: string,
  env: Readonly<Record<string, string | undefined>> = {},
): Promise<string[]> {
  const written: string[] = [];
  const options = { appUrl, platformVersion: hubspotPlatformVersionFrom(env), auth: hubspotAppAuthFrom(env) };
  for (const [relative, content] of Object.entries(hubspotProjectFiles(options))) {
    const path = join(dir, relative);
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, content, 'utf8');
    written.push(path);
  }
  return written;
}
