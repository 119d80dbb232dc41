/**
 * The folder rule of `npm run depcheck`, beside the file rules of .dependency-cruiser.cjs (docs/layers.md,
 * "Folders"). It cruises src/ alone: dependency-cruiser's folder graph also holds each parent folder with
 * everything under it, so `src` itself, which holds the registry, would reach every connector and make up
 * cycles that no two folders of src/ have. test/folder-cycles.test.ts checks the same on the import graph.
 */

const { options } = require('./.dependency-cruiser.cjs');

module.exports = {
  forbidden: [
    {
      name: 'no-folder-cycle',
      severity: 'error',
      scope: 'folder',
      comment:
        'No import cycle between the folders of src/, of any length, type imports included: the folders ' +
        'layer. Break one by moving the module or type that closes it to the folder its layer says.',
      from: { path: '^src/[^/]+$' },
      to: { circular: true },
    },
  ],
  options: {
    ...options,
    exclude: { path: '^(dist|node_modules|connectors|local|test|bench|fixtures)/' },
  },
};
