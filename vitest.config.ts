import { configDefaults, defineConfig } from 'vitest/config';

// Most test files spend their time waiting on processes (redis-server, workers, plugins),
// not on the CPU, so two run at a time; each owns its Redis, data dir, prefix and ports.
// The files that measure time or signal delivery, or load the machine on their own, run
// after them one at a time (vitest runs a project without file parallelism last, alone).
// SWITCHYARD_TEST_WORKERS sets how many files run at a time (1: all one at a time).
const SERIAL = [
  'test/core/supervision/**/*.test.ts', // containment, live stderr, keeper timing
  'test/core/faults-*.test.ts', // time limits and kills measured in milliseconds
  'test/queue/long-operations.test.ts', // a cancelled call's processes gone within 5 s
  'test/browser/**/*.test.ts', // Chromium
  'test/multihost/**/*.test.ts', // network namespaces, partitions
  'test/sentinel/**/*.test.ts', // failover windows
  'test/deploy/install-package.test.ts', // npm pack and install, CPU-bound
];
const workers = Number(process.env.SWITCHYARD_TEST_WORKERS ?? 2);

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // The JSON report beside the usual output: .ci/tier-times.mjs sums it by tier after a CI run.
    reporters: ['default', 'json'],
    outputFile: { json: 'test-artifacts/vitest-report.json' },
    projects: [
      {
        extends: true,
        test: {
          name: 'parallel',
          include: ['sdk/test/**/*.test.ts', 'test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, ...SERIAL],
          maxWorkers: workers,
        },
      },
      {
        extends: true,
        test: { name: 'serial', include: SERIAL, fileParallelism: false },
      },
    ],
  },
});
