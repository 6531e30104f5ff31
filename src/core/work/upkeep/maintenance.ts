// Time-driven work the scheduler enqueues and any worker runs: health checks
// (the fan-out and each plugin's check), rediscovery, retention and recurring
// inspections. The queue shell only parses the job and calls these.
import { errorCode } from '../../platform/index.js';
import type { RetentionConfig, Keys, Queues } from '../../redis/index.js';
import type { MaintenanceJob } from './upkeep-jobs.js';
import { runRetention } from './retention.js';
import type { Notices } from '../notify/index.js';
import { runSchedule } from './schedule-service.js';
import type { Redis } from 'ioredis';
import type { PluginService } from '../../plugins/index.js';
import type { ProjectService } from '../../projects/index.js';
import type { BatchService } from '../batches/index.js';
import type { OperationStore } from '../operations/index.js';
import type { ScheduleStore } from './schedule-store.js';

/** What maintenance works with (a process's Runtime has all of it). */
export interface MaintenanceDeps {
  core: { redis: Redis; keys: Keys; plugins: PluginService; projects: ProjectService };
  batches: BatchService;
  operations: { store: OperationStore };
  queues: Queues;
  schedules: ScheduleStore;
  /** Webhook events (a failed schedule run). */
  notifier?: Notices;
  /** Who this process acts as in the audit. */
  identity: string;
}

export class MaintenanceService {
  constructor(
    private readonly runtime: MaintenanceDeps,
    private readonly retention?: RetentionConfig,
  ) {}

  /** One maintenance task. */
  async run(task: MaintenanceJob): Promise<Record<string, unknown>> {
    const { core, batches, queues, identity, schedules } = this.runtime;
    switch (task.task) {
      case 'rediscover':
        return { plugins: (await core.plugins.refresh(identity)).length };
      case 'retention':
        return runRetention(this.runtime, this.retention);
      case 'health-checks': {
        // No audit entry per run (one every 30 s buried the rest): each
        // plugin's health change is audited where it is stored (plugin-store.ts).
        const ids = await core.plugins.enabledIds();
        await queues.health.addBulk(ids.map((pluginId) => ({ name: 'health', data: { pluginId } })));
        return { plugins: ids.length };
      }
      case 'recurring-inspection':
        return runSchedule(
          {
            core,
            queues,
            schedules,
            batches,
            ...(this.runtime.notifier ? { notifier: this.runtime.notifier } : {}),
          },
          task.scheduleId,
          identity,
        );
    }
  }

  /** Health checks of one plugin, or of every enabled one: status per plugin, or `failed: <code>`. */
  async checkHealth(pluginId: string | undefined, signal?: AbortSignal): Promise<Record<string, string>> {
    const { plugins } = this.runtime.core;
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
}
