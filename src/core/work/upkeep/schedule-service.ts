// Recurring inspections for every front (CLI, api) and for the worker that
// runs them: add, edit, pause, resume and remove (the plugin must be allowed
// to inspect now, named projects must exist, the timing must respect the
// host's minimum interval); the list with next and last runs; one run, which
// skips while the schedule's previous batch still runs; and the bulk cancel
// of a schedule's batches. Every change is audited with its actor.
import { randomUUID } from 'node:crypto';
import { appendAudit, type Role } from '../../access/index.js';
import { errorCode, NotFoundError } from '../../platform/index.js';
import type { Redis } from 'ioredis';
import type { PluginService } from '../../plugins/index.js';
import { checkLabels, type ProjectService } from '../../projects/index.js';
import { scriptsOn, type Keys, type Queues } from '../../redis/index.js';
import { checkPriority, type BatchService, type BatchView } from '../batches/index.js';
import type { Notices } from '../notify/index.js';
import {
  recurringId,
  scheduleMinIntervalMs,
  upsertRecurring,
  type Schedule,
  type ScheduleRun,
  type ScheduleChanges,
  type ScheduleInput,
  type ScheduleProjects,
  ScheduleStore,
  type ScheduleView,
} from './schedule-store.js';

/** What the schedule service works with. */
export interface ScheduleServiceDeps {
  redis: Redis;
  keys: Keys;
  plugins: PluginService;
  projects: ProjectService;
  queues: Queues;
  batches: BatchService;
  /** Webhook events (`schedule.failed`); none: not announced. */
  notices?: Notices;
}

type Stores = ScheduleServiceDeps & { store: ScheduleStore };

async function audit(runtime: Stores, actor: string, action: string, target: string, detail: object) {
  await appendAudit(runtime.redis, runtime.keys, {
    actor,
    action,
    target,
    detail: detail as Record<string, unknown>,
  });
}

/**
 * Named projects must exist now (as `inspect` refuses them); `all` and a label
 * are resolved at each run (a label no project has yet is a failed run, shown
 * in `schedule list`, not a refusal: projects get labels later).
 */
async function checkProjects(runtime: Stores, projects: ScheduleProjects): Promise<void> {
  if (projects === 'all') return;
  if (!Array.isArray(projects)) return void checkLabels([projects.label]);
  const unique = [...new Set(projects)];
  const found = await runtime.projects.getMany(unique);
  const unknown = unique.filter((_id, index) => found[index] === undefined);
  if (unknown.length > 0)
    throw new NotFoundError(
      `unknown project${unknown.length > 1 ? 's' : ''} ${unknown.map((id) => JSON.stringify(id)).join(', ')} (project list shows the known ones)`,
    );
}

const authorize = (runtime: Stores, pluginId: string) =>
  runtime.plugins.authorize(pluginId, 'project.inspect', 'project.metadata.read');

const timingOf = (schedule: Schedule) =>
  schedule.cron ? { cron: schedule.cron } : { everyMs: schedule.everyMs };

async function addSchedule(
  runtime: Stores,
  input: ScheduleInput,
  actor: string,
  role: Role | undefined,
): Promise<Schedule> {
  // The role rule of `inspect --priority` holds when the schedule is set; its runs keep the class.
  if (input.priority !== undefined) checkPriority(input.priority, role);
  await authorize(runtime, input.pluginId);
  await checkProjects(runtime, input.projects);
  const created = await runtime.store.add(input, actor, runtime.queues, scheduleMinIntervalMs());
  await audit(runtime, actor, 'schedule.add', created.id, {
    name: created.name,
    pluginId: created.pluginId,
    projects: created.projects,
    ...timingOf(created),
    ...(created.priority ? { priority: created.priority } : {}),
  });
  return created;
}

async function editSchedule(
  runtime: Stores,
  idOrName: string,
  changes: ScheduleChanges,
  actor: string,
  role: Role | undefined,
): Promise<Schedule> {
  if (changes.priority !== undefined) checkPriority(changes.priority, role);
  const schedule = await runtime.store.resolve(idOrName);
  await authorize(runtime, schedule.pluginId);
  if (changes.projects !== undefined) await checkProjects(runtime, changes.projects);
  const edited = await runtime.store.update(
    schedule,
    changes,
    actor,
    runtime.queues,
    scheduleMinIntervalMs(),
  );
  await audit(runtime, actor, 'schedule.edit', edited.id, { name: edited.name, changes });
  return edited;
}

/** Pauses (no job scheduler, no run) or resumes a schedule; asking again changes nothing (still audited). */
async function setSchedulePaused(
  runtime: Stores,
  idOrName: string,
  paused: boolean,
  actor: string,
): Promise<Schedule> {
  const schedule = await runtime.store.resolve(idOrName);
  const action = paused ? 'schedule.pause' : 'schedule.resume';
  if ((schedule.pausedAt !== undefined) === paused) {
    await audit(runtime, actor, action, schedule.id, { name: schedule.name, outcome: 'unchanged' });
    return schedule;
  }
  if (!paused) await authorize(runtime, schedule.pluginId);
  const next = await runtime.store.setPaused(schedule, paused, actor, runtime.queues);
  await audit(runtime, actor, action, schedule.id, { name: schedule.name });
  return next;
}

async function removeSchedule(
  runtime: Stores,
  idOrName: string,
  actor: string,
): Promise<{ id: string; removed: true; cancelledBatches: string[] }> {
  // An unknown id is an error, as for every other kind of id (CLI exit 2, HTTP 404).
  const schedule = await runtime.store.resolve(idOrName);
  await runtime.store.remove(schedule, runtime.queues);
  // Its running batch goes with it: nothing could name the schedule to cancel it afterwards.
  const cancelled = await runtime.batches.cancelRunning({ scheduleId: schedule.id }, actor);
  const cancelledBatches = cancelled.map((batch) => batch.batchId);
  await audit(runtime, actor, 'schedule.remove', schedule.id, { name: schedule.name, cancelledBatches });
  return { id: schedule.id, removed: true, cancelledBatches };
}

/** Every schedule, oldest first, with its next run and its last run (and that batch as it is now). */
async function listSchedules(runtime: Stores): Promise<ScheduleView[]> {
  const { store: schedules, queues, batches } = runtime;
  const known = await schedules.list();
  const lastRuns = await schedules.lastRuns(known.map((schedule) => schedule.id));
  return Promise.all(
    known.map(async (schedule, index): Promise<ScheduleView> => {
      const run = lastRuns[index];
      const nextRunAt = schedule.pausedAt ? undefined : await schedules.nextRunAt(schedule.id, queues);
      const batch = run?.batchId ? await batches.store.get(run.batchId, { results: false }) : undefined;
      return {
        ...schedule,
        ...(nextRunAt ? { nextRunAt } : {}),
        ...(run
          ? {
              lastRun: {
                at: run.at,
                outcome: run.outcome,
                ...(run.batchId ? { batchId: run.batchId } : {}),
                ...(batch ? { batch: countsOf(batch) } : {}),
                ...(run.error ? { error: run.error } : {}),
                ...(run.skips ? { skips: run.skips } : {}),
                ...(run.skippingSince ? { skippingSince: run.skippingSince } : {}),
              },
            }
          : {}),
      };
    }),
  );
}

function countsOf(batch: BatchView) {
  const { state, total, pending, succeeded, failed, cancelled } = batch;
  return { state, total, pending, succeeded, failed, cancelled };
}

/**
 * One run of a schedule (the worker's recurring-inspection job): skipped while
 * the batch it started last still runs (audited `schedule.skipped`), else a new
 * batch; a run that cannot start one is recorded and audited `schedule.failed`.
 */
async function runSchedule(
  runtime: Stores,
  scheduleId: string,
  actor: string,
): Promise<Record<string, unknown>> {
  const { redis, keys } = runtime;
  // The check of the previous batch and the start of the next are one step: a second run at the same
  // time (a manual run beside the timer, a scheduler restarted) sees the guard and skips.
  const guard = keys.scheduleRunGuard(scheduleId);
  const token = `${actor}:${randomUUID()}`;
  if ((await redis.set(guard, token, 'PX', RUN_GUARD_MS, 'NX')) !== 'OK') {
    return { skipped: 'another run of this schedule is starting' };
  }
  try {
    return await runScheduleGuarded(runtime, scheduleId, actor);
  } finally {
    await scriptsOn(redis).lockRelease([guard], token);
  }
}

/** Longer than a batch's creation takes; a guard left by a killed process lapses by itself. */
const RUN_GUARD_MS = 60_000;

async function runScheduleGuarded(
  runtime: Stores,
  scheduleId: string,
  actor: string,
): Promise<Record<string, unknown>> {
  const { store: schedules, batches } = runtime;
  const schedule = await schedules.get(scheduleId);
  if (!schedule) return { skipped: 'schedule removed' };
  if (schedule.pausedAt) return { skipped: 'schedule paused' };
  const at = new Date().toISOString();
  const previousId = await schedules.lastBatchId(schedule.id);
  const previous = previousId ? await batches.store.get(previousId, { results: false }) : undefined;
  const [lastRun] = await schedules.lastRuns([schedule.id]);
  const skipping = lastRun?.outcome === 'skipped' ? lastRun : undefined;
  if (previous?.state === 'running') {
    await recordSkip(runtime, actor, schedule, at, previous.batchId, skipping);
    return { skipped: 'previous batch running', batchId: previous.batchId };
  }
  // A run of skips ends: one row says how many there were.
  if (skipping)
    await audit(runtime, actor, 'schedule.skips-ended', schedule.id, {
      name: schedule.name,
      skips: skipping.skips ?? 1,
      since: skipping.skippingSince ?? skipping.at,
      ...(skipping.batchId ? { runningBatchId: skipping.batchId } : {}),
    });
  try {
    // Its calls count to the schedule's owner's share (fair-queue.ts).
    const batch = await batches.create(schedule.pluginId, schedule.projects, `scheduler:${schedule.id}`, {
      scheduleId: schedule.id,
      requester: schedule.createdBy,
      ...(schedule.priority ? { priority: schedule.priority } : {}),
    });
    await schedules.recordRun(schedule.id, { at, outcome: 'started', batchId: batch.batchId });
    return { batchId: batch.batchId };
  } catch (error) {
    const failure = { code: errorCode(error), message: (error as Error).message };
    await schedules.recordRun(schedule.id, { at, outcome: 'failed', error: failure });
    await audit(runtime, actor, 'schedule.failed', schedule.id, { name: schedule.name, error: failure });
    await runtime.notices
      ?.publish(
        'schedule.failed',
        {
          schedule: { id: schedule.id, name: schedule.name, pluginId: schedule.pluginId },
          at,
          error: failure,
        },
        { key: `${schedule.id}:${at}`, pluginId: schedule.pluginId },
      )
      .catch(() => {});
    return { failed: failure.code };
  }
}

/**
 * A run skipped because the schedule's batch still runs: the first skip of a
 * run of them is audited (`schedule.skipped`); the next ones only count on
 * the last run (`skips`), so a short interval does not flood the audit.
 */
async function recordSkip(
  runtime: Stores,
  actor: string,
  schedule: Schedule,
  at: string,
  runningBatchId: string,
  skipping: ScheduleRun | undefined,
): Promise<void> {
  const continues = skipping !== undefined && skipping.batchId === runningBatchId;
  const skips = continues ? (skipping.skips ?? 1) + 1 : 1;
  const since = continues ? (skipping.skippingSince ?? skipping.at) : at;
  await runtime.store.recordRun(schedule.id, {
    at,
    outcome: 'skipped',
    batchId: runningBatchId,
    skips,
    skippingSince: since,
  });
  if (!continues)
    await audit(runtime, actor, 'schedule.skipped', schedule.id, {
      name: schedule.name,
      reason: 'previous batch running',
      runningBatchId,
      note: 'further skips while this batch runs are counted in schedule list; schedule.skips-ended follows',
    });
}

/**
 * `batch cancel --schedule` / `--state running`: cancels every running batch
 * (of the schedule, by id or name, when one is named); each cancel is audited
 * as `batch cancel` audits it, and the request once as `batch.cancel-many`.
 */
async function cancelBatches(
  runtime: Stores,
  filter: { schedule?: string },
  actor: string,
): Promise<{ cancelled: BatchView[] }> {
  const scheduleId = filter.schedule ? (await runtime.store.resolve(filter.schedule)).id : undefined;
  const cancelled = await runtime.batches.cancelRunning(scheduleId ? { scheduleId } : {}, actor);
  await audit(runtime, actor, 'batch.cancel-many', scheduleId ?? '*', {
    state: 'running',
    ...(scheduleId ? { scheduleId } : {}),
    batchIds: cancelled.map((batch) => batch.batchId),
  });
  return { cancelled };
}

/**
 * Recurring inspections, one object for every front (CLI, api), the worker
 * that runs them and the scheduler that keeps their job schedulers: each
 * `idOrName` is a schedule's id or its name.
 */
export class ScheduleService {
  readonly store: ScheduleStore;
  readonly #stores: Stores;

  constructor(deps: ScheduleServiceDeps) {
    this.store = new ScheduleStore(deps.redis, deps.keys);
    this.#stores = { ...deps, store: this.store };
  }

  /** `role`: the caller's token's (remote mode), which decides whether `priority: high` is allowed. */
  add(input: ScheduleInput, actor: string, role?: Role): Promise<Schedule> {
    return addSchedule(this.#stores, input, actor, role);
  }

  edit(idOrName: string, changes: ScheduleChanges, actor: string, role?: Role): Promise<Schedule> {
    return editSchedule(this.#stores, idOrName, changes, actor, role);
  }

  setPaused(idOrName: string, paused: boolean, actor: string): Promise<Schedule> {
    return setSchedulePaused(this.#stores, idOrName, paused, actor);
  }

  remove(
    idOrName: string,
    actor: string,
  ): Promise<{ id: string; removed: true; cancelledBatches: string[] }> {
    return removeSchedule(this.#stores, idOrName, actor);
  }

  list(): Promise<ScheduleView[]> {
    return listSchedules(this.#stores);
  }

  /** One run (the worker's recurring-inspection job). */
  run(scheduleId: string, actor: string): Promise<Record<string, unknown>> {
    return runSchedule(this.#stores, scheduleId, actor);
  }

  cancelBatches(filter: { schedule?: string }, actor: string): Promise<{ cancelled: BatchView[] }> {
    return cancelBatches(this.#stores, filter, actor);
  }

  /**
   * The scheduler's sync: a job scheduler for each running schedule, and none
   * for one removed or paused elsewhere; how many run.
   */
  async syncJobSchedulers(): Promise<number> {
    const { queues } = this.#stores;
    // A paused schedule has no job scheduler: only the running ones are kept.
    const known = (await this.store.list()).filter((schedule) => !schedule.pausedAt);
    for (const schedule of known) await upsertRecurring(queues, schedule);
    const ids = new Set(known.map((schedule) => recurringId(schedule.id)));
    for (const scheduler of await queues.maintenance.getJobSchedulers(0, -1)) {
      const key = scheduler.key ?? scheduler.id;
      if (key?.startsWith('recurring:') && !ids.has(key)) await queues.maintenance.removeJobScheduler(key);
    }
    return known.length;
  }
}
