import { resolve } from 'node:path';
import { writeHubSpotManifests } from '../../../connectors/hubspot/index.js';
import { writeSalesforceManifests } from '../../../connectors/salesforce/index.js';
import { parseCommandArgs } from '../args.js';
import { UsageError } from '../errors.js';
import type { CommandIo } from '../io.js';

/** `manifests --app-url URL [--out DIR]`: writes the HubSpot project and the SFDX project for your APP_URL. */
export async function manifestsCommand(argv: string[], io: CommandIo): Promise<number> {
  const { values } = parseCommandArgs('manifests', argv, {
    'app-url': { type: 'string' },
    out: { type: 'string', default: 'manifests' },
  });
  const appUrl = values['app-url'] ?? io.env.APP_URL;
  if (!appUrl || !/^https?:\/\/[^\s/]+/.test(appUrl))
    throw new UsageError('manifests needs --app-url https://your-connector.example');
  const out = resolve(values.out);
  const written = [
    ...(await writeHubSpotManifests(resolve(out, 'hubspot'), appUrl.replace(/\/+$/, ''))),
    ...(await writeSalesforceManifests(resolve(out, 'salesforce'), appUrl.replace(/\/+$/, ''))),
  ];
  io.err(`Wrote ${written.length} files under ${out} for ${appUrl}`);
  return 0;
}
