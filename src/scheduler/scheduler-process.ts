// `switchyard scheduler`: keeps the job schedulers in Redis current until stopped
// (a signal, or the `up` that started it going away).
import { eventLogger } from '../core/platform/index.js';
import { runProcess } from '../core/runtime/index.js';
import { DEFAULT_SCHEDULER, startScheduler, type SchedulerOptions } from './scheduler.js';

export async function runSchedulerProcess(config: {
  dataDir: string;
  redisUrl: string;
  prefix: string;
  logLevel?: string;
  scheduler?: Partial<SchedulerOptions>;
}): Promise<void> {
  await runProcess('scheduler', config, { deadlineMs: 10_000 }, async (runtime, logger) => {
    const scheduler = await startScheduler(runtime, {
      ...DEFAULT_SCHEDULER,
      ...config.scheduler,
      log: eventLogger(logger),
    });
    return { stop: () => scheduler.stop() };
  });
}
