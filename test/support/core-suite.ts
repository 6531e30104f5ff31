// The set-up every core test file shares: a fresh data dir (with its plugins
// directory) for the file or the describe block that asks for it, and, for
// a core suite, an owned Redis and a core on its own prefix; all closed
// afterwards. Hooks run as a stack (vitest's default): a file's own afterAll,
// registered after these, runs before the core is closed.
import { afterAll, beforeAll } from 'vitest';
import { join } from 'node:path';
import { createCore, type Core, type CoreConfig } from '../../src/core/runtime/core-services.js';
import type { PluginView } from '../../src/core/plugins/plugin-service.js';
import type { ConfinementSettings } from '../../src/core/plugins/confinement-settings.js';
import { makeDataDir, uniquePrefix } from './data-dir.js';
import { startOwnedRedis, type OwnedRedis } from './redis.js';

export interface DataDirSuite {
  readonly dataDir: string;
  /** <data dir>/plugins, where discovery looks. */
  readonly plugins: string;
}

export interface CoreSuite extends DataDirSuite {
  readonly redis: OwnedRedis;
  readonly core: Core;
  readonly prefix: string;
}

export interface CoreSuiteOptions extends Pick<CoreConfig, 'processActor' | 'callPolicy'> {
  /** Runs on the fresh data dir before the core is created (install packages…). */
  prepare?: (dataDir: string) => Promise<unknown>;
  /** Another suite's Redis to share (started and stopped by that suite), instead of an own one. */
  redis?: () => OwnedRedis;
}

const started = <T>(value: T | undefined, what: string): T => {
  if (value === undefined) throw new Error(`the suite's ${what} is not set up yet`);
  return value;
};

/** A fresh data dir, removed afterwards; call at the top of a test file or describe block. */
export function useDataDir(): DataDirSuite {
  let dataDir: string | undefined;
  let cleanup: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    ({ dataDir, cleanup } = await makeDataDir());
  });
  afterAll(async () => {
    await cleanup?.();
  });

  return {
    get dataDir() {
      return started(dataDir, 'data dir');
    },
    get plugins() {
      return join(started(dataDir, 'data dir'), 'plugins');
    },
  };
}

/** Where most plugin tests start: `id` discovered, trusted at its current fingerprint, enabled with `scopes`. */
export async function trustAndEnable(
  core: Pick<Core, 'plugins'>,
  id: string,
  scopes: string[],
  actor = 'user:test',
  confinement: ConfinementSettings | 'package-writable' = 'package-writable',
): Promise<PluginView> {
  await core.plugins.refresh(actor);
  const { fingerprint } = await core.plugins.show(id);
  await core.plugins.trust(id, fingerprint!, actor);
  await setConfinement(core, id, confinement);
  return core.plugins.enable(id, scopes, actor);
}

/**
 * A plugin's confinement policy, set as an admin's `plugin set` does.
 * `package-writable`: the fixtures record their pids and results in their own
 * package directory, which a confined call may otherwise only read.
 */
export async function setConfinement(
  core: Pick<Core, 'plugins'>,
  id: string,
  settings: ConfinementSettings | 'package-writable',
): Promise<void> {
  const { packageDir } = await core.plugins.show(id);
  const { networkSetBy: _by, ...given } = settings === 'package-writable' ? {} : settings;
  await core.plugins.setPolicy(
    id,
    settings === 'package-writable' ? { allowWrite: [packageDir] } : given,
    'user:test-admin',
  );
}

/** Registers the hooks; call at the top of a test file or describe block. */
export function useCoreSuite(name: string, options: CoreSuiteOptions = {}): CoreSuite {
  const dir = useDataDir();
  const { prepare, redis: shared, ...config } = options;
  const prefix = uniquePrefix(name);
  let redis: OwnedRedis | undefined;
  let core: Core | undefined;

  beforeAll(async () => {
    redis = shared ? shared() : await startOwnedRedis();
    await prepare?.(dir.dataDir);
    core = await createCore({ dataDir: dir.dataDir, redisUrl: redis.url, prefix, ...config });
  });

  afterAll(async () => {
    await core?.close();
    if (!shared) await redis?.stop();
  });

  return {
    get dataDir() {
      return dir.dataDir;
    },
    get plugins() {
      return dir.plugins;
    },
    get redis() {
      return started(redis, 'Redis');
    },
    get core() {
      return started(core, 'core');
    },
    prefix,
  };
}
