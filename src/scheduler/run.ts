// `switchyard scheduler`: keeps the job schedulers in Redis current until stopped
// (a signal, or the `up` that started it going away).
import { processIdentity } from '../core/context.js';
import { createLogger, eventLogger } from '../core/log.js';
import { createRuntime } from '../core/runtime.js';
import { runUntilSignalled } from '../core/run-until-signalled.js';
import { DEFAULT_SCHEDULER, startScheduler, type SchedulerOptions } from './scheduler.js';

export async function runSchedulerProcess(config: {
  dataDir: string;
  redisUrl: string;
  prefix: string;
  logLevel?: string;
  scheduler?: Partial<SchedulerOptions>;
}): Promise<void> {
  const logger = createLogger('scheduler', config.logLevel);
  await runUntilSignalled(
    async () => {
      const runtime = await createRuntime({
        dataDir: config.dataDir,
        redisUrl: config.redisUrl,
        prefix: config.prefix,
        processActor: processIdentity('scheduler'),
      });
      const scheduler = await startScheduler(runtime, {
        ...DEFAULT_SCHEDULER,
        ...config.scheduler,
        log: eventLogger(logger),
      });
      return { stop: () => scheduler.stop().finally(() => runtime.close()) };
    },
    { logger, deadlineMs: 10_000 },
  );
}
