// `switchyard scheduler`: keeps the job schedulers in Redis current until stopped.
import { processIdentity } from '../core/context.js';
import { createLogger, eventLogger } from '../core/log.js';
import { createRuntime } from '../core/runtime.js';
import { DEFAULT_SCHEDULER, startScheduler, type SchedulerOptions } from './scheduler.js';

export async function runSchedulerProcess(config: {
  dataDir: string;
  redisUrl: string;
  prefix: string;
  logLevel?: string;
  scheduler?: Partial<SchedulerOptions>;
}): Promise<void> {
  const logger = createLogger('scheduler', config.logLevel);
  const runtime = await createRuntime({
    dataDir: config.dataDir,
    redisUrl: config.redisUrl,
    prefix: config.prefix,
    processActor: processIdentity('scheduler'),
  });
  const scheduler = await startScheduler(runtime.core, runtime.queues, {
    ...DEFAULT_SCHEDULER,
    ...config.scheduler,
    log: eventLogger(logger),
  });
  await new Promise<void>((resolve) => {
    const stop = () =>
      void scheduler
        .stop()
        .then(() => runtime.close())
        .finally(resolve);
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
  });
}
