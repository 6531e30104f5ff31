// Recurring inspections a user configures: a plugin over a project list or
// all projects, on a cron pattern or an interval, under a unique name. Each
// running schedule is one BullMQ job scheduler (a paused one has none);
// upserting the same id from several processes yields one job per interval,
// so two schedulers never double the work. Beside each schedule the store
// keeps its last run (a batch started, a run skipped, a run that failed) and
// the last batch it started, so an overlapping run can be skipped.
import { randomUUID } from 'node:crypto';
import { CronExpressionParser } from 'cron-parser';
import type { Redis } from 'ioredis';
import ms from 'ms';
import { z } from 'zod';
import { InvalidInputError, NotFoundError, readEnv } from '../../platform/index.js';
import type { Queues, Keys } from '../../redis/index.js';

/** Why `pattern` is not a cron pattern BullMQ can run (it uses cron-parser), or undefined. */
export function cronProblem(pattern: string): string | undefined {
  if (pattern.trim() === '') return 'it is empty';
  try {
    CronExpressionParser.parse(pattern);
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

/** The host's shortest schedule interval when SWITCHYARD_SCHEDULE_MIN_INTERVAL is unset. */
export const DEFAULT_SCHEDULE_MIN_INTERVAL_MS = 60_000;

/** The host policy: the shortest interval a schedule may have, in ms. */
export function scheduleMinIntervalMs(env: NodeJS.ProcessEnv = process.env): number {
  const text = readEnv('SWITCHYARD_SCHEDULE_MIN_INTERVAL', env)?.trim();
  if (!text) return DEFAULT_SCHEDULE_MIN_INTERVAL_MS;
  const value = /^\d+$/.test(text) ? Number(text) : ms(text as ms.StringValue);
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 1_000)
    throw new InvalidInputError(
      `SWITCHYARD_SCHEDULE_MIN_INTERVAL=${JSON.stringify(text)} is not a duration of at least 1s (e.g. 30s, 5m)`,
    );
  return value;
}

/** How many coming runs of a cron pattern are looked at for its shortest gap. */
const CRON_RUNS_SAMPLED = 500;

/** The shortest time between two of the next runs of a (valid) cron pattern, in ms. */
export function cronShortestGapMs(pattern: string, from = new Date()): number {
  const expression = CronExpressionParser.parse(pattern, { currentDate: from });
  let previous = expression.next().getTime();
  let shortest = Number.POSITIVE_INFINITY;
  for (let run = 0; run < CRON_RUNS_SAMPLED && expression.hasNext(); run += 1) {
    const next = expression.next().getTime();
    shortest = Math.min(shortest, next - previous);
    previous = next;
  }
  return shortest;
}

/** Refuses a timing that is not exactly one of an interval or a cron pattern, or runs more often than `minMs`. */
export function checkTiming(
  timing: { everyMs?: number | undefined; cron?: string | undefined },
  minMs: number,
): void {
  if ((timing.everyMs === undefined) === (timing.cron === undefined))
    throw new InvalidInputError(
      'a schedule needs exactly one of an interval (--every) or a cron pattern (--cron)',
    );
  const policy = `the minimum interval is ${ms(minMs)} (host policy SWITCHYARD_SCHEDULE_MIN_INTERVAL)`;
  if (timing.everyMs !== undefined && timing.everyMs < minMs)
    throw new InvalidInputError(`the interval ${ms(timing.everyMs)} (--every) is too short: ${policy}`);
  if (timing.cron !== undefined) {
    const problem = cronProblem(timing.cron);
    if (problem) throw new InvalidInputError(`not a cron pattern (${problem})`);
    const gap = cronShortestGapMs(timing.cron);
    if (gap < minMs)
      throw new InvalidInputError(
        `the cron pattern ${JSON.stringify(timing.cron)} runs every ${ms(gap)}, too often: ${policy}`,
      );
  }
}

/** A schedule's name: a letter or digit, then letters, digits, `.`, `_`, `-`; 64 at most. */
export const SCHEDULE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export const scheduleSchema = z.strictObject({
  id: z.string(),
  name: z
    .string()
    .regex(SCHEDULE_NAME, 'a letter or digit, then letters, digits, ".", "_" or "-" (64 at most)'),
  pluginId: z.string().min(1),
  projects: z.union([
    z.literal('all'),
    z.array(z.string().min(1)).min(1),
    z.strictObject({ label: z.string().min(1) }),
  ]),
  everyMs: z.number().int().min(1_000).optional(),
  cron: z
    .string()
    .min(1)
    .superRefine((pattern, context) => {
      const problem = cronProblem(pattern);
      if (problem) context.addIssue({ code: 'custom', message: `not a cron pattern (${problem})` });
    })
    .optional(),
  /** Its batches' class in the fair queue (fair-queue.ts); absent: normal. */
  priority: z.enum(['high', 'low']).optional(),
  /** Set while paused: a paused schedule has no job scheduler and starts nothing. */
  pausedAt: z.string().optional(),
  pausedBy: z.string().optional(),
  createdBy: z.string(),
  createdAt: z.string(),
  updatedBy: z.string().optional(),
  updatedAt: z.string().optional(),
});
export type Schedule = z.infer<typeof scheduleSchema>;

/** What a schedule's last run did. */
export interface ScheduleRun {
  at: string;
  /** started: a batch was created; skipped: its previous batch still ran; failed: no batch could start. */
  outcome: 'started' | 'skipped' | 'failed';
  /** started: the new batch; skipped: the batch still running. */
  batchId?: string;
  /** failed: why. */
  error?: { code: string; message: string };
  /** skipped: how many runs in a row skipped for this batch (one audit row for all of them). */
  skips?: number;
  /** skipped: when the first of them was. */
  skippingSince?: string;
}

/** A schedule with when it runs next and what its last run did (`schedule list`, GET /schedules). */
export type ScheduleView = Schedule & {
  /** When its job scheduler runs it next (absent while paused). */
  nextRunAt?: string;
  lastRun?: ScheduleRun & {
    /** started or skipped: that batch as it is now (absent once retention deleted it). */
    batch?: {
      state: string;
      total: number;
      pending: number;
      succeeded: number;
      failed: number;
      cancelled: number;
    };
  };
};

/** Every trusted project, these ids, or every project with a label: `all` and a label are resolved at each run. */
export type ScheduleProjects = string[] | 'all' | { label: string };

export interface ScheduleInput {
  pluginId: string;
  projects: ScheduleProjects;
  everyMs?: number;
  cron?: string;
  /** Unique; derived from the plugin and the projects when absent. */
  name?: string;
  /** Its batches' class in the fair queue; default normal (high: docs/CLI.md "Fair share"). */
  priority?: SchedulePriority;
}

/** A schedule's batches' class in the fair queue (batches/fair-queue.ts PRIORITIES). */
export type SchedulePriority = 'high' | 'normal' | 'low';

export interface ScheduleChanges {
  name?: string;
  /** normal removes a class set before. */
  priority?: SchedulePriority;
  projects?: ScheduleProjects;
  everyMs?: number;
  cron?: string;
}

interface RunRecord {
  lastRun?: ScheduleRun;
  lastBatchId?: string | undefined;
}

export class ScheduleStore {
  constructor(
    readonly redis: Redis,
    readonly keys: Keys,
  ) {}

  get key(): string {
    return this.keys.schedules;
  }

  /** Oldest first. */
  async list(): Promise<Schedule[]> {
    return (await this.redis.hvals(this.key))
      .map(parseStored)
      .sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id));
  }

  async get(id: string): Promise<Schedule | undefined> {
    const raw = await this.redis.hget(this.key, id);
    return raw ? parseStored(raw) : undefined;
  }

  /** The schedule with this id or this name; NotFoundError otherwise. */
  async resolve(idOrName: string): Promise<Schedule> {
    const byId = await this.get(idOrName);
    if (byId) return byId;
    const id = await this.redis.hget(this.keys.scheduleNames, idOrName);
    const byName = id ? await this.get(id) : undefined;
    if (!byName)
      throw new NotFoundError(
        `unknown schedule ${JSON.stringify(idOrName)} (schedule list shows the known ones)`,
      );
    return byName;
  }

  async add(input: ScheduleInput, actor: string, queues: Queues, minMs: number): Promise<Schedule> {
    checkTiming(input, minMs);
    if (input.name !== undefined) checkName(input.name);
    const id = `sched_${randomUUID().slice(0, 8)}`;
    const base = input.name ?? derivedName(input.pluginId, input.projects);
    const draft = validated({
      id,
      name: base,
      pluginId: input.pluginId,
      projects: input.projects,
      ...(input.everyMs !== undefined ? { everyMs: input.everyMs } : {}),
      ...(input.cron !== undefined ? { cron: input.cron } : {}),
      ...(input.priority !== undefined && input.priority !== 'normal' ? { priority: input.priority } : {}),
      createdBy: actor,
      createdAt: new Date().toISOString(),
    });
    const name = await this.#claimName(id, base, input.name === undefined);
    const schedule = validated({ ...draft, name });
    await this.redis.hset(this.key, id, JSON.stringify(schedule));
    await upsertRecurring(queues, schedule);
    return schedule;
  }

  /** Applies the changes (an interval replaces a cron pattern and the other way round) and re-upserts its job scheduler. */
  async update(
    schedule: Schedule,
    changes: ScheduleChanges,
    actor: string,
    queues: Queues,
    minMs: number,
  ): Promise<Schedule> {
    const timingChanged = changes.everyMs !== undefined || changes.cron !== undefined;
    const timing = timingChanged
      ? { everyMs: changes.everyMs, cron: changes.cron }
      : { everyMs: schedule.everyMs, cron: schedule.cron };
    if (timingChanged) checkTiming(timing, minMs);
    if (changes.name !== undefined && changes.name !== schedule.name) checkName(changes.name);
    const { everyMs: _every, cron: _cron, priority: before, ...rest } = schedule;
    const priority = changes.priority ?? before;
    const next = validated({
      ...rest,
      ...(priority !== undefined && priority !== 'normal' ? { priority } : {}),
      ...(changes.name !== undefined ? { name: changes.name } : {}),
      ...(changes.projects !== undefined ? { projects: changes.projects } : {}),
      ...(timing.everyMs !== undefined ? { everyMs: timing.everyMs } : {}),
      ...(timing.cron !== undefined ? { cron: timing.cron } : {}),
      updatedBy: actor,
      updatedAt: new Date().toISOString(),
    });
    if (next.name !== schedule.name) {
      await this.#claimName(schedule.id, next.name, false);
      await this.#releaseName(schedule);
    }
    await this.redis.hset(this.key, schedule.id, JSON.stringify(next));
    if (!next.pausedAt) await upsertRecurring(queues, next);
    return next;
  }

  /** Pauses (its job scheduler removed) or resumes (upserted again); unchanged when it already is. */
  async setPaused(schedule: Schedule, paused: boolean, actor: string, queues: Queues): Promise<Schedule> {
    const { pausedAt: _at, pausedBy: _by, ...rest } = schedule;
    const next = validated(paused ? { ...rest, pausedAt: new Date().toISOString(), pausedBy: actor } : rest);
    await this.redis.hset(this.key, schedule.id, JSON.stringify(next));
    if (paused) await queues.maintenance.removeJobScheduler(recurringId(schedule.id));
    else await upsertRecurring(queues, next);
    return next;
  }

  async remove(schedule: Schedule, queues: Queues): Promise<boolean> {
    const removed = (await this.redis.hdel(this.key, schedule.id)) === 1;
    await this.#releaseName(schedule);
    await this.redis.hdel(this.keys.scheduleRuns, schedule.id);
    await queues.maintenance.removeJobScheduler(recurringId(schedule.id));
    return removed;
  }

  /** Records a run; a started one also becomes the batch the next run waits for. */
  async recordRun(id: string, run: ScheduleRun): Promise<void> {
    const previous = await this.#runRecord(id);
    const record: RunRecord = {
      lastRun: run,
      ...(run.outcome === 'started' ? { lastBatchId: run.batchId } : { lastBatchId: previous.lastBatchId }),
    };
    await this.redis.hset(this.keys.scheduleRuns, id, JSON.stringify(record));
  }

  /** The last batch the schedule started (undefined: none yet). */
  async lastBatchId(id: string): Promise<string | undefined> {
    return (await this.#runRecord(id)).lastBatchId;
  }

  /** The last run of each schedule, in order (undefined: never ran). */
  async lastRuns(ids: string[]): Promise<(ScheduleRun | undefined)[]> {
    if (ids.length === 0) return [];
    const raw = await this.redis.hmget(this.keys.scheduleRuns, ...ids);
    return raw.map((value) => (value ? (JSON.parse(value) as RunRecord).lastRun : undefined));
  }

  /** When the job scheduler of the schedule runs it next (undefined: it has none). */
  async nextRunAt(id: string, queues: Queues): Promise<string | undefined> {
    const scheduler = await queues.maintenance.getJobScheduler(recurringId(id));
    return scheduler?.next ? new Date(scheduler.next).toISOString() : undefined;
  }

  async #runRecord(id: string): Promise<RunRecord> {
    const raw = await this.redis.hget(this.keys.scheduleRuns, id);
    return raw ? (JSON.parse(raw) as RunRecord) : {};
  }

  /** Takes `base` for `id` (or, `numbered`, the first free `base-2`, `base-3`, …); refuses a name taken. */
  async #claimName(id: string, base: string, numbered: boolean): Promise<string> {
    for (let n = 1; n <= 1_000; n += 1) {
      const name = n === 1 ? base : `${base.slice(0, 58)}-${n}`;
      const owner = await this.redis.hget(this.keys.scheduleNames, name);
      const clash = owner !== null || (await this.get(name)) !== undefined;
      if (!clash && (await this.redis.hsetnx(this.keys.scheduleNames, name, id)) === 1) return name;
      if (!numbered)
        throw new InvalidInputError(
          `a schedule named ${JSON.stringify(name)} exists already (schedule list shows it); choose another --name`,
        );
    }
    throw new InvalidInputError(`no free name left for ${JSON.stringify(base)}; give one with --name`);
  }

  async #releaseName(schedule: Schedule): Promise<void> {
    if ((await this.redis.hget(this.keys.scheduleNames, schedule.name)) === schedule.id)
      await this.redis.hdel(this.keys.scheduleNames, schedule.name);
  }
}

/** `<plugin>-<first project>` (`-all` for every project, `-label-<label>` for a label), made a valid name. */
function derivedName(pluginId: string, projects: ScheduleProjects): string {
  const what =
    projects === 'all'
      ? 'all'
      : !Array.isArray(projects)
        ? `label-${projects.label}`
        : projects.length === 1
          ? projects[0]!
          : `${projects[0]}-and-more`;
  const name = `${pluginId}-${what}`
    .replace(/[^A-Za-z0-9._-]+/g, '-')
    .replace(/^[^A-Za-z0-9]+/, '')
    .slice(0, 56);
  return name === '' || name.startsWith('sched_') ? 'schedule' : name;
}

/** A name a user gives: valid, and never one that reads as an id. */
function checkName(name: string): void {
  if (!SCHEDULE_NAME.test(name))
    throw new InvalidInputError(
      `invalid schedule name ${JSON.stringify(name)}: a letter or digit, then letters, digits, ".", "_" or "-" (64 at most)`,
    );
  if (name.startsWith('sched_'))
    throw new InvalidInputError(
      `invalid schedule name ${JSON.stringify(name)}: sched_ starts ids, not names`,
    );
}

function validated(candidate: unknown): Schedule {
  const parsed = scheduleSchema.safeParse(candidate);
  if (!parsed.success)
    throw new InvalidInputError(
      `invalid schedule: ${parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ')}`,
    );
  return parsed.data;
}

/** A stored schedule; one saved before schedules had names is named by its id. */
function parseStored(raw: string): Schedule {
  const stored = JSON.parse(raw) as Omit<Schedule, 'name'> & { name?: string };
  const { id, name, ...rest } = stored;
  return { id, name: name ?? id, ...rest };
}

export function recurringId(scheduleId: string): string {
  return `recurring:${scheduleId}`;
}

export async function upsertRecurring(queues: Queues, schedule: Schedule): Promise<void> {
  await queues.maintenance.upsertJobScheduler(
    recurringId(schedule.id),
    schedule.cron ? { pattern: schedule.cron } : { every: schedule.everyMs! },
    { name: 'recurring-inspection', data: { task: 'recurring-inspection', scheduleId: schedule.id } },
  );
}
