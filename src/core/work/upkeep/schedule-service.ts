// Adding and removing recurring inspections, for every front (CLI, api): the
// plugin must be allowed to inspect now, the schedule itself is validated by
// the store (cron patterns included), and both changes are audited with their actor.
import { appendAudit } from '../../access/index.js';
import { NotFoundError } from '../../platform/index.js';
import type { Redis } from 'ioredis';
import type { PluginService } from '../../plugins/index.js';
import type { Keys, Queues } from '../../redis/index.js';
import type { Schedule, ScheduleStore } from './schedule-store.js';

export interface ScheduleInput {
  pluginId: string;
  projects: string[] | 'all';
  everyMs?: number;
  cron?: string;
}

/** What adding and removing schedules works with (a process's Runtime has all of it). */
type Stores = {
  core: { redis: Redis; keys: Keys; plugins: PluginService };
  queues: Queues;
  schedules: ScheduleStore;
};

export async function addSchedule(runtime: Stores, input: ScheduleInput, actor: string): Promise<Schedule> {
  const { core } = runtime;
  await core.plugins.authorize(input.pluginId, 'project.inspect', 'project.metadata.read');
  const created = await runtime.schedules.add(input, actor, runtime.queues);
  await appendAudit(core.redis, core.keys, {
    actor,
    action: 'schedule.add',
    target: created.id,
    detail: {
      pluginId: created.pluginId,
      projects: created.projects,
      ...(created.cron ? { cron: created.cron } : { everyMs: created.everyMs }),
    },
  });
  return created;
}

export async function removeSchedule(
  runtime: Stores,
  id: string,
  actor: string,
): Promise<{ id: string; removed: true }> {
  // An unknown id is an error, as for every other kind of id (CLI exit 2, HTTP 404).
  if (!(await runtime.schedules.remove(id, runtime.queues)))
    throw new NotFoundError(`unknown schedule ${JSON.stringify(id)} (schedule list shows the known ones)`);
  await appendAudit(runtime.core.redis, runtime.core.keys, {
    actor,
    action: 'schedule.remove',
    target: id,
    detail: {},
  });
  return { id, removed: true };
}
