// Global options (docs/CLI.md): data dir, Redis URL, key prefix, JSON output.
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { readEnv } from '../core/platform/index.js';

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
  const fromEnv = readEnv('SWITCHYARD_DATA_DIR', env);
  if (fromEnv) return resolve(fromEnv);
  if (env.XDG_DATA_HOME) return join(env.XDG_DATA_HOME, 'switchyard');
  return join(homedir(), '.local', 'share', 'switchyard');
}

/** The unix socket of the private redis-server `switchyard up` starts for a data dir. */
export function embeddedSocket(dataDir: string): string {
  return join(dataDir, 'redis', 'redis.sock');
}

export function resolveConfig(options: GlobalOptions, env: NodeJS.ProcessEnv = process.env): ResolvedConfig {
  const dataDir = resolve(options.dataDir ?? defaultDataDir(env));
  const given = options.redisUrl ?? readEnv('SWITCHYARD_REDIS_URL', env);
  return {
    dataDir,
    redisUrl: given ?? `redis+unix://${embeddedSocket(dataDir)}`,
    prefix: options.prefix ?? readEnv('SWITCHYARD_PREFIX', env) ?? 'switchyard',
    json: options.json === true,
    embedded: given === undefined,
  };
}
