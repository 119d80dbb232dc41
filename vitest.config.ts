import { defineConfig } from 'vitest/config';

export default defineConfig({
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
