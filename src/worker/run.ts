// `switchyard worker`: one worker process. SIGTERM/SIGINT: take no new jobs,
// let running calls finish up to the deadline, then cancel them (killing their
// process groups), then exit.
import { processIdentity } from '../core/context.js';
import { createLogger, eventLogger } from '../core/log.js';
import { createRuntime } from '../core/runtime.js';
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
}

export async function runWorkerProcess(config: WorkerProcessConfig): Promise<void> {
  const logger = createLogger('worker', config.logLevel);
  const identity = processIdentity('worker');
  const runtime = await createRuntime({
    dataDir: config.dataDir,
    redisUrl: config.redisUrl,
    prefix: config.prefix,
    processActor: identity,
    ...(config.callTimeoutMs ? { limits: { callTimeoutMs: config.callTimeoutMs } } : {}),
  });
  const workers = await startWorkers(runtime.core, runtime.work, runtime.queues, runtime.bullConnection, {
    concurrency: config.concurrency,
    log: eventLogger(logger),
    retention: runtime.retention,
    ...config.worker,
  });
  await new Promise<void>((resolve) => {
    let stopping = false;
    const stop = (signal: string) => {
      if (stopping) return;
      stopping = true;
      logger.info({ event: 'shutdown', signal }, 'shutdown');
      void workers
        .shutdown(config.shutdownDeadlineMs)
        .then(() => runtime.close())
        .finally(resolve);
    };
    process.once('SIGTERM', () => stop('SIGTERM'));
    process.once('SIGINT', () => stop('SIGINT'));
  });
  logger.info({ event: 'stopped' }, 'stopped');
}
