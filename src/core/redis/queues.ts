// The BullMQ queues: their names, creation and retention defaults. Each job
// kind's payload schema and retry policy belong to the room that owns the job
// (work/operations, work/notify, work/upkeep; the inspect job's are here still);
// payloads are validated with zod when enqueued and again when a worker takes
// them: a malformed job fails at once, finally.
import { Queue, type ConnectionOptions, type JobsOptions } from 'bullmq';
import { z } from 'zod';
import { readEnv, type EnvironmentName } from '../platform/index.js';
import type { Keys } from './keys.js';

export const QUEUE_NAMES = {
  inspect: 'inspect',
  operate: 'operate',
  health: 'health',
  maintenance: 'maintenance',
  notify: 'notify',
} as const;

/** One job inspects a slice of a batch's projects (see projectsPerJob). */
export const inspectJobSchema = z.strictObject({
  batchId: z.string().min(1),
  pluginId: z.string().min(1),
  projectIds: z.array(z.string().min(1)).min(1).max(100),
});
export type InspectJob = z.infer<typeof inspectJobSchema>;

export interface RetentionConfig {
  /** Finished batches and operations are deleted after this many seconds (the newest two finished batches of each plugin stay, for `batch diff`). */
  recordsSeconds: number;
  /** BullMQ keeps failed jobs (for inspection) this long. */
  failedJobsSeconds: number;
}

export const DEFAULT_RETENTION: RetentionConfig = {
  recordsSeconds: 7 * 24 * 3600,
  failedJobsSeconds: 24 * 3600,
};

/**
 * Retention from the environment: SWITCHYARD_RETENTION_DAYS (finished batches
 * and operations, default 7) and SWITCHYARD_FAILED_JOB_HOURS (failed BullMQ
 * jobs kept for inspection, default 24).
 */
export function retentionFromEnv(env: NodeJS.ProcessEnv = process.env): RetentionConfig {
  const number = (name: EnvironmentName, fallback: number) => {
    const value = readEnv(name, env);
    if (value === undefined || value === '') return fallback;
    const parsed = Number(value);
    if (!Number.isFinite(parsed) || parsed <= 0)
      throw new Error(`${name} must be a positive number, not ${JSON.stringify(value)}`);
    return parsed;
  };
  return {
    recordsSeconds: Math.round(number('SWITCHYARD_RETENTION_DAYS', 7) * 24 * 3600),
    failedJobsSeconds: Math.round(number('SWITCHYARD_FAILED_JOB_HOURS', 24) * 3600),
  };
}

/** Inspections: 3 attempts with exponential backoff (only transient failures retry). */
export const INSPECT_ATTEMPTS = 3;
export const INSPECT_BACKOFF_MS = 500;

/**
 * Projects per inspect job. BullMQ's per-job cost (about 30 Redis commands
 * and two Lua scripts to take and finish a job, ~1 KiB of Redis memory while
 * queued) is shared by the job's projects, so a batch goes in as few jobs as
 * still spread it over the worker slots: 24 to 47 jobs up to 2,400 projects
 * (one project each below 48), then 100 projects per job.
 */
export function projectsPerJob(total: number): number {
  return Math.max(1, Math.min(100, Math.floor(total / 24)));
}

/**
 * How many job ids a batch of `total` projects may have: as many as
 * projectsPerJob makes, or as the smaller slices of earlier versions (at
 * least 64 jobs, up to 50 projects each) made for a batch queued before an
 * upgrade. `batch cancel` removes that many; an id that never existed costs a no-op.
 */
export function inspectJobIds(total: number): number {
  const earlier = Math.max(1, Math.min(50, Math.ceil(total / 64)));
  return Math.max(Math.ceil(total / projectsPerJob(total)), Math.ceil(total / earlier));
}

/**
 * An inspect job's id is `<batchId>.<slice index>` (so `batch cancel` can
 * remove a batch's queued jobs by id).
 */
export function inspectJobId(batchId: string, sliceIndex: number): string {
  return `${batchId}.${sliceIndex}`;
}

export function jobDefaults(retention: RetentionConfig = DEFAULT_RETENTION): JobsOptions {
  return {
    // Results live in Switchyard's own records; a finished job is not needed.
    removeOnComplete: true,
    removeOnFail: { age: retention.failedJobsSeconds, count: 10_000 },
  };
}

export interface Queues {
  inspect: Queue;
  operate: Queue;
  health: Queue;
  maintenance: Queue;
  notify: Queue;
  close(): Promise<void>;
}

export function createQueues(connection: ConnectionOptions, keys: Keys, retention?: RetentionConfig): Queues {
  const options = { connection, prefix: keys.bullPrefix, defaultJobOptions: jobDefaults(retention) };
  const queues = {
    inspect: new Queue(QUEUE_NAMES.inspect, options),
    operate: new Queue(QUEUE_NAMES.operate, options),
    health: new Queue(QUEUE_NAMES.health, options),
    maintenance: new Queue(QUEUE_NAMES.maintenance, options),
    notify: new Queue(QUEUE_NAMES.notify, options),
  };
  return {
    ...queues,
    async close() {
      await Promise.all(Object.values(queues).map((queue) => queue.close()));
    },
  };
}
