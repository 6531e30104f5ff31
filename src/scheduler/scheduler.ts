// The scheduler keeps time with BullMQ job schedulers: health checks of enabled
// plugins, rediscovery, retention clean-up and user-configured recurring
// inspections. Job scheduler ids are fixed, so starting two schedulers yields
// one job per interval, not two.
import { SCHEDULER_BEAT_MS } from '../core/work/upkeep/index.js';
import type { Runtime } from '../core/runtime/index.js';

export interface SchedulerOptions {
  healthEveryMs: number;
  rediscoverEveryMs: number;
  retentionEveryMs: number;
  /** How often user schedules are re-synced from Redis. */
  syncEveryMs: number;
  log?: (event: string, fields?: Record<string, unknown>) => void;
}

export const DEFAULT_SCHEDULER: SchedulerOptions = {
  healthEveryMs: 30_000,
  rediscoverEveryMs: 60_000,
  retentionEveryMs: 3_600_000,
  syncEveryMs: 30_000,
};

export interface RunningScheduler {
  stop(): Promise<void>;
}

export async function startScheduler(runtime: Runtime, options: SchedulerOptions): Promise<RunningScheduler> {
  const { maintenance } = runtime;
  const log = options.log ?? (() => {});
  const fixed = [
    ['health-checks', options.healthEveryMs],
    ['rediscover', options.rediscoverEveryMs],
    ['retention', options.retentionEveryMs],
  ] as const;
  const sync = async () => log('scheduler-synced', await maintenance.syncJobSchedulers(fixed));
  await sync();
  const beat = () => maintenance.beat().catch(() => {});
  await beat();
  const beatTimer = setInterval(() => void beat(), SCHEDULER_BEAT_MS);
  const timer = setInterval(
    () => void sync().catch((error: Error) => log('scheduler-error', { error: error.message })),
    options.syncEveryMs,
  );
  return {
    async stop() {
      clearInterval(timer);
      clearInterval(beatTimer);
    },
  };
}
