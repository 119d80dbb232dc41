import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { basename, dirname, extname, join } from 'node:path';
import { findProjectRoot } from '../../src/util/project-root.js';

/**
 * Bundles the component preview's browser script (./components-page.js) with esbuild, the way the tests see
 * the components: the card through HubSpot's test renderer, and the reportScore LWC compiled by @lwc/compiler
 * from the generated SFDX project with sfdx-lwc-jest's stubs (`lightning/*`) and @lwc/jest-transformer's
 * values for `@salesforce/i18n/*`, the Jest tests' states module included. esbuild and the LWC compiler are
 * development packages: they are loaded here on demand, so a production install never needs them.
 */

export class PreviewBundleError extends Error {
  readonly code = 'PREVIEW_BUNDLE_FAILED';
  constructor(message: string, options?: { cause: unknown }) {
    super(message, options);
    this.name = 'PreviewBundleError';
  }
}

/** Where sfdx-lwc-jest finds `c/<name>` for the Jest tests: the generated project's `unpackaged` directory. */
const LWC_DIR = join('manifests', 'salesforce', 'unpackaged', 'main', 'default', 'lwc');
const LWC_STATES = join('test', 'lwc', 'report-score-states.js');

/** @lwc/jest-transformer's values for `@salesforce/i18n/<name>` (transforms/i18n-scoped-import.js). */
const I18N: Record<string, string> = {
  lang: 'en',
  dir: 'ltr',
  locale: 'en-US',
  timeZone: 'America/Los_Angeles',
  currency: 'USD',
};

/**
 * The part of Jest's `jest.fn` that the `lightning/uiRecordApi` stub calls while it loads (`jest.fn()`,
 * `jest.fn(impl)`, `.mockResolvedValue`): enough for the stub's wire adapters to work in a browser.
 */
const JEST_SHIM = `globalThis.jest = globalThis.jest || { fn(impl) {
  const f = function (...args) { return f.impl ? f.impl.apply(this, args) : undefined; };
  f.impl = impl;
  f.mockResolvedValue = (v) => { f.impl = () => Promise.resolve(v); return f; };
  f.mockReturnValue = (v) => { f.impl = () => v; return f; };
  f.mockImplementation = (i) => { f.impl = i; return f; };
  return f;
} };`;

interface Esbuild {
  build: typeof import('esbuild').build;
}
interface LwcCompiler {
  transformSync: typeof import('@lwc/compiler').transformSync;
}

/** The bundled browser script, as text. */
export async function bundleComponentPreview(root: string = findProjectRoot()): Promise<string> {
  let esbuild: Esbuild;
  let lwc: LwcCompiler;
  try {
    esbuild = await import('esbuild');
    lwc = await import('@lwc/compiler');
  } catch (cause) {
    throw new PreviewBundleError(
      'the component preview needs the development packages (esbuild, @lwc/compiler): run npm ci in the clone',
      { cause },
    );
  }
  const require = createRequire(join(root, 'package.json'));
  const stubs = join(
    dirname(require.resolve('@salesforce/sfdx-lwc-jest/package.json')),
    'src',
    'lightning-stubs',
  );
  const lwcDir = join(root, LWC_DIR);
  const compiled = (path: string) => path.startsWith(lwcDir) || path.startsWith(stubs);

  const result = await esbuild.build({
    entryPoints: [join(root, 'local', 'preview', 'components-page.js')],
    bundle: true,
    write: false,
    format: 'iife',
    platform: 'browser',
    target: 'es2022',
    jsx: 'automatic',
    banner: { js: JEST_SHIM },
    define: { 'process.env.NODE_ENV': '"production"' },
    alias: { lwc: '@lwc/engine-dom' },
    nodePaths: [join(root, 'node_modules')],
    logLevel: 'silent',
    plugins: [
      {
        name: 'lwc-as-in-jest',
        setup(build) {
          build.onResolve({ filter: /^preview:lwc-states$/ }, () => ({ path: join(root, LWC_STATES) }));
          build.onResolve({ filter: /^c\/[A-Za-z0-9_]+$/ }, (args) => {
            const name = args.path.slice(2);
            return { path: join(lwcDir, name, `${name}.js`) };
          });
          build.onResolve({ filter: /^lightning\/[A-Za-z0-9_]+$/ }, (args) => {
            const name = args.path.slice('lightning/'.length);
            return { path: join(stubs, name, `${name}.js`) };
          });
          build.onResolve({ filter: /^@salesforce\/i18n\// }, (args) => ({
            path: args.path,
            namespace: 'i18n',
          }));
          build.onLoad({ filter: /.*/, namespace: 'i18n' }, (args) => {
            const name = args.path.slice('@salesforce/i18n/'.length).split('.')[0] ?? '';
            return { contents: `export default ${JSON.stringify(I18N[name] ?? null)};`, loader: 'js' };
          });
          // A component's files (its .js, .html template and .css) go through the LWC compiler, as in Jest.
          build.onLoad({ filter: /\.(js|html|css)$/, namespace: 'file' }, async (args) => {
            if (!compiled(args.path)) return undefined;
            const source = await readFile(args.path, 'utf8');
            const folder = basename(dirname(args.path));
            const { code } = lwc.transformSync(source, args.path, {
              namespace: args.path.startsWith(stubs) ? 'lightning' : 'c',
              name: folder,
            });
            return { contents: code, loader: 'js', resolveDir: dirname(args.path) };
          });
          // A compiled template imports its implicit stylesheets, each of which may be absent (as in Jest, an
          // absent one is no style); a component imports its other files without extension.
          build.onResolve({ filter: /^\.\/.+/ }, (args) => {
            if (!compiled(args.importer)) return undefined;
            const [file = ''] = args.path.split('?');
            if (extname(file) === '.css') {
              const path = join(args.resolveDir, file);
              return existsSync(path) ? { path } : { path, namespace: 'no-style' };
            }
            return extname(file) === '' ? { path: join(args.resolveDir, `${file}.js`) } : undefined;
          });
          build.onLoad({ filter: /.*/, namespace: 'no-style' }, () => ({
            contents: 'export default undefined;',
            loader: 'js',
          }));
        },
      },
    ],
  });
  const [file] = result.outputFiles;
  if (!file) throw new PreviewBundleError('esbuild wrote no preview script');
  return file.text;
}
