// Time-driven work the scheduler enqueues and any worker runs: health checks
// (the fan-out and each plugin's check), rediscovery, retention and recurring
// inspections; and the scheduler's own side: the job schedulers of the fixed
// tasks and of the recurring inspections, and its heartbeat. The queue shells
// only parse the job and call these.
import type { Redis } from 'ioredis';
import { errorCode } from '../../platform/index.js';
import type { RetentionConfig, Keys, Queues } from '../../redis/index.js';
import type { PluginService } from '../../plugins/index.js';
import type { BatchStore } from '../batches/index.js';
import type { OperationStore } from '../operations/index.js';
import { beatScheduler, liveness, type Liveness } from './liveness.js';
import { runRetention } from './retention.js';
import type { ScheduleService } from './schedule-service.js';
import type { MaintenanceJob } from './upkeep-jobs.js';

/** What maintenance works with (the runtime builds it). */
export interface MaintenanceDeps {
  redis: Redis;
  keys: Keys;
  plugins: PluginService;
  batches: { store: BatchStore };
  operations: { store: OperationStore };
  queues: Queues;
  schedules: ScheduleService;
  /** Who this process acts as in the audit. */
  identity: string;
}

/** The fixed maintenance tasks the scheduler keeps a job scheduler for, each with its interval. */
export type FixedTasks = ReadonlyArray<
  readonly [task: 'health-checks' | 'rediscover' | 'retention', everyMs: number]
>;

export class MaintenanceService {
  constructor(
    private readonly deps: MaintenanceDeps,
    private readonly retention?: RetentionConfig,
  ) {}

  /** One maintenance task. */
  async run(task: MaintenanceJob): Promise<Record<string, unknown>> {
    const { plugins, queues, identity, schedules } = this.deps;
    switch (task.task) {
      case 'rediscover':
        return { plugins: (await plugins.refresh(identity)).length };
      case 'retention':
        return runRetention(this.deps, this.retention);
      case 'health-checks': {
        // No audit entry per run (one every 30 s buried the rest): each
        // plugin's health change is audited where it is stored (plugin-store.ts).
        const ids = await plugins.enabledIds();
        await queues.health.addBulk(ids.map((pluginId) => ({ name: 'health', data: { pluginId } })));
        return { plugins: ids.length };
      }
      case 'recurring-inspection':
        return schedules.run(task.scheduleId, identity);
    }
  }

  /** Health checks of one plugin, or of every enabled one: status per plugin, or `failed: <code>`. */
  async checkHealth(pluginId: string | undefined, signal?: AbortSignal): Promise<Record<string, string>> {
    const { plugins } = this.deps;
    const ids = pluginId ? [pluginId] : await plugins.enabledIds();
    const results: Record<string, string> = {};
    for (const id of ids) {
      try {
        results[id] = (await plugins.health(id, signal ? { signal } : {})).status;
      } catch (error) {
        results[id] = `failed: ${errorCode(error)}`;
      }
    }
    return results;
  }

  /**
   * The scheduler's sync: one job scheduler per fixed task and per running
   * schedule (ids fixed, so two schedulers make one job per interval), none
   * for a schedule removed or paused elsewhere.
   */
  async syncJobSchedulers(fixed: FixedTasks): Promise<{ fixed: number; recurring: number }> {
    const { queues, schedules } = this.deps;
    for (const [task, every] of fixed) {
      await queues.maintenance.upsertJobScheduler(task, { every }, { name: task, data: { task } });
    }
    return { fixed: fixed.length, recurring: await schedules.syncJobSchedulers() };
  }

  /** `/healthz`: Redis answers, a worker consumes, a scheduler beats; each worker's confinement. */
  liveness(): Promise<Liveness> {
    return liveness(this.deps.redis, this.deps.keys, this.deps.queues);
  }

  /** The scheduler's heartbeat (/healthz: a scheduler beats). */
  beat(): Promise<void> {
    return beatScheduler(this.deps.redis, this.deps.keys, this.deps.identity);
  }
}
