import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type * as TypeScript from 'typescript';
import { markGenerated } from '../../../src/crm/generated-mark.js';
import { lazyRequire } from '../../../src/util/lazy-require.js';
import { findProjectRoot } from '../../../src/util/project-root.js';
import { metadataDocument } from '../manifest/metadata-xml.js';

/**
 * The seller-facing words of the reportScore component as an LWC module of their own, `c/sellerWords`: the
 * words the HubSpot card shows too, whose one source is the card's seller-words.ts. The card folder imports
 * nothing from the repository (HubSpot builds it apart), so the words live there, and the generator writes
 * them into the SFDX project with their types removed. A module without a template is an LWC service
 * component: its folder holds the JavaScript file of its own name and a configuration file, and other
 * components import it by its name.
 */

export const SELLER_WORDS_MODULE = {
  name: 'sellerWords',
  label: 'Seller Words',
  description: 'The words the report component shows sellers, the same as the HubSpot card shows.',
} as const;

/** Where the words are written, relative to the repository's root. */
export const SELLER_WORDS_SOURCE = 'connectors/hubspot/card/ui/seller-words.ts';

/** TypeScript's compiler, loaded on first use: only writing the project needs it. */
const typescript = lazyRequire<typeof TypeScript>('typescript');

/** seller-words.ts as JavaScript: the same statements and comments, the type annotations and imports gone. */
export function sellerWordsScript(): string {
  const ts = typescript();
  const source = readFileSync(join(findProjectRoot(), ...SELLER_WORDS_SOURCE.split('/')), 'utf8');
  const { outputText } = ts.transpileModule(source, {
    fileName: 'seller-words.ts',
    compilerOptions: {
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.ESNext,
      newLine: ts.NewLineKind.LineFeed,
      removeComments: false,
    },
  });
  return outputText;
}

/** The module's configuration: not exposed to any builder, imported by the components that use it. */
export function sellerWordsMeta(apiVersion: string): string {
  return metadataDocument('LightningComponentBundle', {
    apiVersion,
    description: SELLER_WORDS_MODULE.description,
    isExposed: false,
    masterLabel: SELLER_WORDS_MODULE.label,
  });
}

/** The module's two files, marked, keyed by path under the given `main/default` directory. */
export function sellerWordsFiles(root: string, apiVersion: string): Record<string, string> {
  const bundle = `${root}/lwc/${SELLER_WORDS_MODULE.name}`;
  const script = `${bundle}/${SELLER_WORDS_MODULE.name}.js`;
  const meta = `${script}-meta.xml`;
  return {
    [script]: markGenerated(script, sellerWordsScript(), { copyOf: SELLER_WORDS_SOURCE }),
    [meta]: markGenerated(meta, sellerWordsMeta(apiVersion), {
      generator: 'connectors/salesforce/record-page/seller-words-module.ts',
    }),
  };
}
