// Global options (docs/CLI.md): data dir, Redis URL, key prefix, JSON output.
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';

export interface GlobalOptions {
  dataDir?: string;
  redisUrl?: string;
  prefix?: string;
  json?: boolean;
}

export interface ResolvedConfig {
  dataDir: string;
  redisUrl: string;
  prefix: string;
  json: boolean;
  /** True when no URL was given: the embedded Redis of this data dir. */
  embedded: boolean;
}

export function defaultDataDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.SWITCHYARD_DATA_DIR) return resolve(env.SWITCHYARD_DATA_DIR);
  if (env.XDG_DATA_HOME) return join(env.XDG_DATA_HOME, 'switchyard');
  return join(homedir(), '.local', 'share', 'switchyard');
}

/** The unix socket of the private redis-server `switchyard up` starts for a data dir. */
export function embeddedSocket(dataDir: string): string {
  return join(dataDir, 'redis', 'redis.sock');
}

export function resolveConfig(options: GlobalOptions, env: NodeJS.ProcessEnv = process.env): ResolvedConfig {
  const dataDir = resolve(options.dataDir ?? defaultDataDir(env));
  const given = options.redisUrl ?? env.SWITCHYARD_REDIS_URL;
  return {
    dataDir,
    redisUrl: given ?? `redis+unix://${embeddedSocket(dataDir)}`,
    prefix: options.prefix ?? env.SWITCHYARD_PREFIX ?? 'switchyard',
    json: options.json === true,
    embedded: given === undefined,
  };
}
