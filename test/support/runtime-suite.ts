// A file's own Redis and a Runtime on it (every store and service of a
// process, no worker): for tests of the stores and upkeep functions.
import { afterAll, beforeAll } from 'vitest';
import { createRuntime, type Runtime } from '../../src/core/runtime/runtime.js';
import { makeDataDir, uniquePrefix } from './data-dir.js';
import { startOwnedRedis, type OwnedRedis } from './redis.js';

/** Registers the hooks; `runtime()` is the file's Runtime once beforeAll ran. */
export function useRuntimeSuite(name: string): { runtime: () => Runtime } {
  let redis: OwnedRedis | undefined;
  let runtime: Runtime | undefined;
  let cleanup: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    redis = await startOwnedRedis();
    const made = await makeDataDir();
    cleanup = made.cleanup;
    runtime = await createRuntime({ dataDir: made.dataDir, redisUrl: redis.url, prefix: uniquePrefix(name) });
  });

  afterAll(async () => {
    await runtime?.close();
    await redis?.stop();
    await cleanup?.();
  });

  return {
    runtime: () => {
      if (!runtime) throw new Error('the runtime is not started yet');
      return runtime;
    },
  };
}
