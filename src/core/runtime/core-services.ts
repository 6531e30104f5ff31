// One place that wires the core for any process: Redis, keys, services.
import { hostname, userInfo } from 'node:os';
import type { Redis } from 'ioredis';
import { keysFor, type Keys } from '../redis/index.js';
import {
  DEFAULT_HOST_CALL_POLICY,
  PluginService,
  flushCallMetrics,
  type HostCallPolicy,
} from '../plugins/index.js';
import { ProjectService } from '../projects/index.js';
import { closeRedis, connectRedis } from '../redis/index.js';

export interface CoreConfig {
  dataDir: string;
  redisUrl: string;
  prefix?: string;
  /** Who this process acts as when it decides on its own (e.g. `worker:host:pid`). */
  processActor?: string;
  /** How every plugin call of this process runs (a worker's flags); DEFAULT_HOST_CALL_POLICY if not given. */
  callPolicy?: HostCallPolicy;
  failFast?: boolean;
  /** The api: Redis commands fail at once while Redis is unreachable (redis.ts). */
  answersRequests?: boolean;
}

export interface Core {
  config: CoreConfig;
  redis: Redis;
  keys: Keys;
  projects: ProjectService;
  plugins: PluginService;
  close(): Promise<void>;
}

export async function createCore(config: CoreConfig): Promise<Core> {
  const redis = await connectRedis(config.redisUrl, {
    failFast: config.failFast ?? false,
    answersRequests: config.answersRequests ?? false,
  });
  const keys = keysFor(config.prefix);
  const projects = new ProjectService(redis, keys);
  const plugins = new PluginService(redis, keys, projects, {
    dataDir: config.dataDir,
    processActor: config.processActor ?? processIdentity('cli'),
    callPolicy: config.callPolicy ?? DEFAULT_HOST_CALL_POLICY,
  });
  return {
    config,
    redis,
    keys,
    projects,
    plugins,
    async close() {
      await plugins.close();
      await projects.close();
      await flushCallMetrics(redis);
      await closeRedis(redis);
    },
  };
}

/** `<role>:<host>:<pid>`: how a process names itself in the audit. */
export function processIdentity(role: string): string {
  return `${role}:${hostname()}:${process.pid}`;
}

/** The local OS user, the actor of CLI commands (docs/CLI.md). */
export function localUser(): string {
  try {
    return `user:${userInfo().username}@${hostname()}`;
  } catch {
    return `user:uid-${process.getuid?.() ?? 'unknown'}@${hostname()}`;
  }
}
