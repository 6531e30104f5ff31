// `switchyard worker`: one worker process. SIGTERM/SIGINT: take no new jobs,
// let running calls finish up to the deadline, then cancel them (killing their
// process groups), then exit. Also when the `up` that started it is gone.
import { eventLogger } from '../core/platform/index.js';
import { runProcess } from '../core/runtime/index.js';
import { startWorkers, type WorkerOptions } from './worker.js';

/** For the CLI's --operation-priority default: the CLI reaches the worker through this entry point only. */
export { DEFAULT_OPERATION_PRIORITY_MS } from './worker.js';

export interface WorkerProcessConfig {
  dataDir: string;
  redisUrl: string;
  prefix: string;
  concurrency: number;
  shutdownDeadlineMs: number;
  logLevel?: string;
  worker?: Partial<WorkerOptions>;
  callTimeoutMs?: number;
  /** Refuse to run plugins unless every mechanism of kernel confinement is in force here. */
  requireConfinement?: boolean;
}

export async function runWorkerProcess(config: WorkerProcessConfig): Promise<void> {
  await runProcess(
    'worker',
    config,
    {
      // Running calls get the shutdown deadline; closing the queues and Redis a little more.
      deadlineMs: config.shutdownDeadlineMs + 5_000,
      runtime: {
        ...(config.callTimeoutMs ? { limits: { callTimeoutMs: config.callTimeoutMs } } : {}),
        ...(config.requireConfinement ? { requireConfinement: true } : {}),
      },
    },
    async (runtime, logger) => {
      const workers = await startWorkers(runtime, {
        concurrency: config.concurrency,
        log: eventLogger(logger),
        requireConfinement: config.requireConfinement ?? false,
        ...config.worker,
      });
      return { stop: () => workers.shutdown(config.shutdownDeadlineMs) };
    },
  );
}
