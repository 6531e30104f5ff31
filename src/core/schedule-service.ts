// Adding and removing recurring inspections, for every front (CLI, api): the
// plugin must be allowed to inspect now, the schedule itself is validated by
// the store (cron patterns included), and both changes are audited with their actor.
import { appendAudit } from './audit.js';
import { NotFoundError } from './errors.js';
import type { Runtime } from './runtime.js';
import type { Schedule } from './schedules.js';

export interface ScheduleInput {
  pluginId: string;
  projects: string[] | 'all';
  everyMs?: number;
  cron?: string;
}

type Stores = Pick<Runtime, 'core' | 'queues' | 'schedules'>;

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
