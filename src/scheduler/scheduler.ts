// The scheduler keeps time with BullMQ job schedulers: health checks of enabled
// plugins, rediscovery, retention clean-up and user-configured recurring
// inspections. Job scheduler ids are fixed, so starting two schedulers yields
// one job per interval, not two.
import { SCHEDULER_BEAT_MS, beatScheduler, recurringId, upsertRecurring } from '../core/work/upkeep/index.js';
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
  const { core, queues, schedules } = runtime;
  const log = options.log ?? (() => {});
  const fixed = [
    ['health-checks', options.healthEveryMs],
    ['rediscover', options.rediscoverEveryMs],
    ['retention', options.retentionEveryMs],
  ] as const;
  const sync = async () => {
    for (const [task, every] of fixed) {
      await queues.maintenance.upsertJobScheduler(task, { every }, { name: task, data: { task } });
    }
    // A paused schedule has no job scheduler: only the running ones are kept.
    const known = (await schedules.list()).filter((schedule) => !schedule.pausedAt);
    for (const schedule of known) await upsertRecurring(queues, schedule);
    // Drop schedulers whose schedule was removed or paused elsewhere.
    const ids = new Set(known.map((schedule) => recurringId(schedule.id)));
    for (const scheduler of await queues.maintenance.getJobSchedulers(0, -1)) {
      const key = scheduler.key ?? scheduler.id;
      if (key?.startsWith('recurring:') && !ids.has(key)) await queues.maintenance.removeJobScheduler(key);
    }
    log('scheduler-synced', { fixed: fixed.length, recurring: known.length });
  };
  await sync();
  const beat = () => beatScheduler(core.redis, core.keys, runtime.identity).catch(() => {});
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
