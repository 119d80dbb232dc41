import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type * as TypeScript from 'typescript';
import { lazyRequire } from '../../../src/util/lazy-require.js';
import { findProjectRoot } from '../../../src/util/project-root.js';
import { type ServiceModule, serviceModuleFiles } from './service-module.js';

/**
 * The seller-facing words of the reportScore component as an LWC module of their own, `c/sellerWords`: the
 * words the HubSpot card shows too, whose one source is the card's seller-words.ts. The card folder imports
 * nothing from the repository (HubSpot builds it apart), so the words live there, and the generator writes
 * them into the SFDX project with their types removed, as a service module (service-module.ts).
 */

export const SELLER_WORDS_MODULE = {
  name: 'sellerWords',
  label: 'Seller Words',
  description: 'The words the report component shows sellers, the same as the HubSpot card shows.',
} as const satisfies ServiceModule;

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

/** The module's two files, marked, keyed by path under the given `main/default` directory. */
export function sellerWordsFiles(root: string, apiVersion: string): Record<string, string> {
  return serviceModuleFiles(
    SELLER_WORDS_MODULE,
    root,
    apiVersion,
    { content: sellerWordsScript(), from: { copyOf: SELLER_WORDS_SOURCE } },
    'connectors/salesforce/record-page/seller-words-module.ts',
  );
}
