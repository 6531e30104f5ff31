// Recurring inspections a user configures: a plugin over a project list or
// all projects, on a cron pattern or an interval. Each becomes one BullMQ job
// scheduler; upserting the same id from several processes yields one job per
// interval, so two schedulers never double the work.
import { randomUUID } from 'node:crypto';
import { CronExpressionParser } from 'cron-parser';
import type { Redis } from 'ioredis';
import { z } from 'zod';
import { InvalidInputError } from '../../platform/index.js';
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

export const scheduleSchema = z.strictObject({
  id: z.string(),
  pluginId: z.string().min(1),
  projects: z.union([z.literal('all'), z.array(z.string().min(1)).min(1)]),
  everyMs: z.number().int().min(1_000).optional(),
  cron: z
    .string()
    .min(1)
    .superRefine((pattern, context) => {
      const problem = cronProblem(pattern);
      if (problem) context.addIssue({ code: 'custom', message: `not a cron pattern (${problem})` });
    })
    .optional(),
  createdBy: z.string(),
  createdAt: z.string(),
});
export type Schedule = z.infer<typeof scheduleSchema>;

export class ScheduleStore {
  constructor(
    readonly redis: Redis,
    readonly keys: Keys,
  ) {}

  get key(): string {
    return this.keys.schedules;
  }

  async list(): Promise<Schedule[]> {
    return (await this.redis.hvals(this.key)).map((raw) => JSON.parse(raw) as Schedule);
  }

  async get(id: string): Promise<Schedule | undefined> {
    const raw = await this.redis.hget(this.key, id);
    return raw ? (JSON.parse(raw) as Schedule) : undefined;
  }

  async add(
    input: { pluginId: string; projects: string[] | 'all'; everyMs?: number; cron?: string },
    actor: string,
    queues: Queues,
  ): Promise<Schedule> {
    if ((input.everyMs === undefined) === (input.cron === undefined)) {
      throw new InvalidInputError(
        'a schedule needs exactly one of an interval (--every) or a cron pattern (--cron)',
      );
    }
    const parsed = scheduleSchema.safeParse({
      id: `sched_${randomUUID().slice(0, 8)}`,
      ...input,
      createdBy: actor,
      createdAt: new Date().toISOString(),
    });
    if (!parsed.success)
      throw new InvalidInputError(
        `invalid schedule: ${parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ')}`,
      );
    await this.redis.hset(this.key, parsed.data.id, JSON.stringify(parsed.data));
    await upsertRecurring(queues, parsed.data);
    return parsed.data;
  }

  async remove(id: string, queues: Queues): Promise<boolean> {
    const removed = (await this.redis.hdel(this.key, id)) === 1;
    await queues.maintenance.removeJobScheduler(`recurring:${id}`);
    return removed;
  }
}

export async function upsertRecurring(queues: Queues, schedule: Schedule): Promise<void> {
  await queues.maintenance.upsertJobScheduler(
    `recurring:${schedule.id}`,
    schedule.cron ? { pattern: schedule.cron } : { every: schedule.everyMs! },
    { name: 'recurring-inspection', data: { task: 'recurring-inspection', scheduleId: schedule.id } },
  );
}
