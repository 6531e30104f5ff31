// One way to build a process's runtime (docs/adr/0006-one-process-runtime.md):
// every process — the CLI, api, worker, scheduler — reaches the same
// installation (data dir, Redis URL, key prefix) and acts as
// `<role>:<host>:<pid>`. The three long-running ones
// also share the rest of their life: a logger named after the role, the
// runtime built inside the signal handling, closed after their service stops.
import type { Logger } from 'pino';
import { processIdentity } from './core-services.js';
import { createLogger } from '../platform/index.js';
import { runUntilSignalled, type Service } from '../platform/index.js';
import { createRuntime, type Runtime, type RuntimeConfig } from './runtime.js';

export type ProcessRole = 'cli' | 'api' | 'worker' | 'scheduler';

/** Where a process finds its installation: what every process is started with. */
export interface InstallationConfig {
  dataDir: string;
  redisUrl: string;
  prefix: string;
}

/** What a process adds to the installation: limits, fail-fast, answering requests… */
export type RuntimeExtras = Omit<RuntimeConfig, keyof InstallationConfig | 'processActor'>;

/** The runtime of a process with this role, acting as `<role>:<host>:<pid>`. */
export function runtimeFor(
  config: InstallationConfig,
  role: ProcessRole,
  extras: RuntimeExtras = {},
): Promise<Runtime> {
  return createRuntime({
    dataDir: config.dataDir,
    redisUrl: config.redisUrl,
    prefix: config.prefix,
    processActor: processIdentity(role),
    ...extras,
  });
}

export interface ProcessOptions {
  /** How long the orderly stop may take (runUntilSignalled). */
  deadlineMs: number;
  /** The process's logger when it needed one before starting; else one named after the role. */
  logger?: Logger;
  runtime?: RuntimeExtras;
}

/**
 * A long-running process (api, worker, scheduler): builds its runtime, starts
 * its service on it and runs until signalled. The runtime is closed after the
 * service stops, or at once if the service fails to start.
 */
export async function runProcess(
  role: Exclude<ProcessRole, 'cli'>,
  config: InstallationConfig & { logLevel?: string },
  options: ProcessOptions,
  start: (runtime: Runtime, logger: Logger) => Promise<Service>,
): Promise<void> {
  const logger = options.logger ?? createLogger(role, config.logLevel);
  await runUntilSignalled(
    async () => {
      const runtime = await runtimeFor(config, role, options.runtime);
      let service: Service;
      try {
        service = await start(runtime, logger);
      } catch (error) {
        await runtime.close();
        throw error;
      }
      return { ...service, stop: () => service.stop().finally(() => runtime.close()) };
    },
    { logger, deadlineMs: options.deadlineMs },
  );
}
