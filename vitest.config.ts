import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['sdk/test/**/*.test.ts', 'test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // The JSON report beside the usual output: .ci/tier-times.mjs sums it by tier after a CI run.
    reporters: ['default', 'json'],
    outputFile: { json: 'test-artifacts/vitest-report.json' },
  },
});
