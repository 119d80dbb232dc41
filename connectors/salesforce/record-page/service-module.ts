import { type GeneratedFrom, markGenerated } from '../../../src/crm/generated-mark.js';
import { metadataDocument } from '../manifest/metadata-xml.js';

/**
 * An LWC service module the generator writes beside the reportScore component: a module without a template,
 * whose folder holds the JavaScript file of its own name and a configuration file; other components import it
 * as `c/<name>`. The SFDX project is deployed apart from the repository, so what the component shares with the
 * connector is written into it as such modules.
 */
export interface ServiceModule {
  readonly name: string;
  readonly label: string;
  readonly description: string;
}

/** The module's configuration: not exposed to any builder, imported by the components that use it. */
export function serviceModuleMeta(module: ServiceModule, apiVersion: string): string {
  return metadataDocument('LightningComponentBundle', {
    apiVersion,
    description: module.description,
    isExposed: false,
    masterLabel: module.label,
  });
}

/**
 * The module's two files, marked, keyed by path under the given `main/default` directory: `script` says where
 * its JavaScript comes from, `generator` is the file that writes its configuration.
 */
export function serviceModuleFiles(
  module: ServiceModule,
  root: string,
  apiVersion: string,
  script: { content: string; from: GeneratedFrom },
  generator: string,
): Record<string, string> {
  const path = `${root}/lwc/${module.name}/${module.name}.js`;
  const meta = `${path}-meta.xml`;
  return {
    [path]: markGenerated(path, script.content, script.from),
    [meta]: markGenerated(meta, serviceModuleMeta(module, apiVersion), { generator }),
  };
}
