// The set-up every core test file shares: an owned Redis for the file (or the
// describe block that calls it), a fresh data dir, and a core on its own
// prefix; all closed afterwards.
import { afterAll, beforeAll } from 'vitest';
import { createCore, type Core, type CoreConfig } from '../../src/core/context.js';
import { makeDataDir, uniquePrefix } from './data-dir.js';
import { startOwnedRedis, type OwnedRedis } from './redis.js';

export interface CoreSuite {
  readonly redis: OwnedRedis;
  readonly core: Core;
  readonly dataDir: string;
}

export interface CoreSuiteOptions extends Pick<CoreConfig, 'processActor' | 'limits'> {
  /** Runs on the fresh data dir before the core is created (install packages…). */
  prepare?: (dataDir: string) => Promise<unknown>;
}

/** Registers the hooks; call at the top of a test file or describe block. */
export function useCoreSuite(name: string, options: CoreSuiteOptions = {}): CoreSuite {
  let redis: OwnedRedis | undefined;
  let core: Core | undefined;
  let dataDir: string | undefined;
  let cleanup: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    redis = await startOwnedRedis();
    ({ dataDir, cleanup } = await makeDataDir());
    await options.prepare?.(dataDir);
    const { prepare: _prepare, ...config } = options;
    core = await createCore({ dataDir, redisUrl: redis.url, prefix: uniquePrefix(name), ...config });
  });

  afterAll(async () => {
    await core?.close();
    await redis?.stop();
    await cleanup?.();
  });

  const started = <T>(value: T | undefined, what: string): T => {
    if (value === undefined) throw new Error(`the core suite's ${what} is not set up yet`);
    return value;
  };
  return {
    get redis() {
      return started(redis, 'Redis');
    },
    get core() {
      return started(core, 'core');
    },
    get dataDir() {
      return started(dataDir, 'data dir');
    },
  };
}
