/**
 * The import rules of the code base, checked by `npm run depcheck` (and in CI, .ci/run). docs/layers.md says
 * what the layers are and why. Type-only imports count (`tsPreCompilationDeps`): a cycle of types is still a
 * cycle a reader has to untangle. The rule between the folders of src/ is in .dependency-cruiser-folders.cjs,
 * which cruises src/ alone.
 */

/** What the CRM layer (src/crm and connectors/) may import from src/: the parts every connector needs. */
const CRM_LAYER_MAY_USE =
  '^src/(crm|auth|installations|storage|util)/|^src/(fields|log|env-schema|redis|crm-errors|crm-kind)[.]ts$';

/**
 * App-level record shapes the CRM layer may name in types only (what a CRM's record card shows: review items,
 * report requests, who decided); never their code.
 */
const CRM_LAYER_MAY_SEE_TYPES = '^src/decisions/decision-log[.]ts$|^src/requests/request-store[.]ts$';

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'No file-level import cycle, type imports included. Break one by moving the shared type down.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'registry-alone-imports-connectors',
      severity: 'error',
      comment:
        'Only the provider registry (src/providers.ts) imports connectors/; the rest of src/ reaches a CRM ' +
        'through the provider objects it lists.',
      from: { path: '^src/', pathNot: '^src/providers[.]ts$' },
      to: { path: '^connectors/' },
    },
    {
      name: 'connector-stays-in-its-folder',
      severity: 'error',
      comment: 'A connector does not import another connector: what they share lives in src/crm.',
      from: { path: '^connectors/([^/]+)/' },
      to: { path: '^connectors/', pathNot: '^connectors/$1/' },
    },
    {
      name: 'crm-layer-below-the-app',
      severity: 'error',
      comment:
        'src/crm and connectors/ use only the CRM contract and the foundations (fields, auth, installations, ' +
        'storage, util, log); never the registry, the pipeline, the server, the admin or the CLI.',
      from: { path: '^(src/crm/|connectors/)' },
      to: { path: '^src/', pathNot: `${CRM_LAYER_MAY_USE}|${CRM_LAYER_MAY_SEE_TYPES}` },
    },
    {
      name: 'crm-layer-sees-app-types-only',
      severity: 'error',
      comment: 'The record shapes of CRM_LAYER_MAY_SEE_TYPES are imported as types only (import type).',
      from: { path: '^(src/crm/|connectors/)' },
      to: { path: CRM_LAYER_MAY_SEE_TYPES, dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'util-is-a-leaf',
      severity: 'error',
      comment: 'src/util holds helpers that know nothing of the app (the Redis client type aside).',
      from: { path: '^src/util/' },
      to: { path: '^(src/|connectors/|local/)', pathNot: '^src/util/|^src/redis[.]ts$' },
    },
    {
      name: 'local-is-test-equipment',
      severity: 'error',
      comment:
        "local/ (the local system, each connector's stand-in) is demo and test equipment: only the demo " +
        "command and a provider's startLocal load it, on demand; production code never imports it.",
      from: {
        path: '^(src|connectors)/',
        pathNot: '^src/cli/commands/demo[.]ts$|^connectors/[^/]+/index[.]ts$|/local/',
      },
      to: { path: '^local/|^connectors/[^/]+/local/' },
    },
    {
      name: 'no-tests-in-the-app',
      severity: 'error',
      comment: 'The application never imports tests or benchmarks.',
      from: { path: '^(src|connectors|local)/' },
      to: { path: '^(test|bench)/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(dist|node_modules)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
