import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

/** The generated SFDX project's components, where sfdx-lwc-jest finds `c/<name>` for the Jest tests. */
const LWC_DIR = fileURLToPath(
  new URL('./manifests/salesforce/unpackaged/main/default/lwc/', import.meta.url),
);

export default defineConfig({
  // The Salesforce component's plain JavaScript imports its modules as `c/<name>`: resolved as in Jest, to the
  // committed generated module, so a test of the component runs it with what the project ships.
  resolve: { alias: [{ find: /^c\/([A-Za-z0-9_]+)$/, replacement: `${LWC_DIR}$1/$1.js` }] },
  test: {
    include: ['test/**/*.test.ts', 'test/**/*.test.tsx'],
    // A Redis of the suite's own when nothing answers at REDIS_URL (see test/support/global-redis.ts).
    globalSetup: ['test/support/global-redis.ts'],
    // Queue and webhook tests share one Redis; each uses its own prefix, but running files one at a
    // time keeps the 2-core machine's timings sane and the Redis connection count low.
    fileParallelism: false,
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // The JSON report lets .ci/run end with one plain "N passed, N failed" line.
    reporters: ['default', 'json'],
    outputFile: { json: 'test-artifacts/vitest-results.json' },
  },
});
