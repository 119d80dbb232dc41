import { resolve } from 'node:path';
import { ConfigError } from '../../env-schema.js';
import { providers } from '../../providers.js';
import { parseCommandArgs } from '../args.js';
import { UsageError } from '../errors.js';
import type { CommandIo } from '../io.js';

/**
 * `manifests --app-url URL [--out DIR]`: writes each CRM's app project (its provider's `writeManifests`) for your
 * APP_URL, and the modules its component sources import from the generator (`writeSources`).
 */
export async function manifestsCommand(argv: string[], io: CommandIo): Promise<number> {
  const { values } = parseCommandArgs('manifests', argv, {
    'app-url': { type: 'string' },
    out: { type: 'string', default: 'manifests' },
  });
  const appUrl = values['app-url'] ?? io.env.APP_URL;
  if (!appUrl || !/^https?:\/\/[^\s/]+/.test(appUrl))
    throw new UsageError('manifests needs --app-url https://your-connector.example');
  const out = resolve(values.out);
  const written: string[] = [];
  for (const provider of providers) {
    const dir = resolve(out, provider.kind);
    try {
      written.push(...(await provider.writeManifests(dir, appUrl.replace(/\/+$/, ''), io.env)));
      if (provider.writeSources) written.push(...(await provider.writeSources()));
    } catch (err) {
      // A provider's own manifest settings (its environment keys) are part of this command's usage.
      if (err instanceof ConfigError) throw new UsageError(err.message);
      throw err;
    }
  }
  io.err(`Wrote ${written.length} files under ${out} for ${appUrl}`);
  return 0;
}
