// `switchyard worker`: one worker process. SIGTERM/SIGINT: take no new jobs,
// let running calls finish up to the deadline, then cancel them (killing their
// process groups), then exit. Also when the `up` that started it is gone.
import { eventLogger } from '../core/platform/index.js';
import type { HostCallPolicy } from '../core/plugins/index.js';
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
  /** The call timeout cap and --require-confinement, as the command line gave them. */
  callPolicy: HostCallPolicy;
}

export async function runWorkerProcess(config: WorkerProcessConfig): Promise<void> {
  await runProcess(
    'worker',
    config,
    {
      // Running calls get the shutdown deadline; closing the queues and Redis a little more.
      deadlineMs: config.shutdownDeadlineMs + 5_000,
      runtime: { callPolicy: config.callPolicy },
    },
    async (runtime, logger) => {
      const workers = await startWorkers(runtime, {
        concurrency: config.concurrency,
        log: eventLogger(logger),
        ...config.worker,
      });
      return { stop: () => workers.shutdown(config.shutdownDeadlineMs) };
    },
  );
}
