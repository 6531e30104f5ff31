// The BullMQ queues: their names, creation and retention defaults. Each job
// kind's payload schema and retry policy belong to the room that owns the job
// (work/batches, work/operations, work/notify, work/upkeep);
// payloads are validated with zod when enqueued and again when a worker takes
// them: a malformed job fails at once, finally.
import { Queue, type ConnectionOptions, type JobsOptions } from 'bullmq';
import { readEnv, type EnvironmentName } from '../platform/index.js';
import type { Keys } from './keys.js';

export const QUEUE_NAMES = {
  inspect: 'inspect',
  operate: 'operate',
  health: 'health',
  maintenance: 'maintenance',
  notify: 'notify',
} as const;

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
