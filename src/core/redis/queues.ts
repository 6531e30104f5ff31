// Queues and job payloads. Payloads are validated with zod when enqueued and
// again when a worker takes them: a malformed job fails at once, finally.
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

export const operateJobSchema = z.strictObject({ operationId: z.string().min(1) });
export type OperateJob = z.infer<typeof operateJobSchema>;

export const healthJobSchema = z.strictObject({ pluginId: z.string().min(1).optional() });
export type HealthJob = z.infer<typeof healthJobSchema>;

export const maintenanceJobSchema = z.discriminatedUnion('task', [
  z.strictObject({ task: z.literal('rediscover') }),
  z.strictObject({ task: z.literal('retention') }),
  z.strictObject({ task: z.literal('health-checks') }),
  z.strictObject({ task: z.literal('recurring-inspection'), scheduleId: z.string().min(1) }),
]);
export type MaintenanceJob = z.infer<typeof maintenanceJobSchema>;

/** One webhook delivery (its record holds the body; the job id is the delivery id). */
export const notifyJobSchema = z.strictObject({ deliveryId: z.string().min(1) });
export type NotifyJob = z.infer<typeof notifyJobSchema>;
/** Webhook deliveries: 8 attempts, exponential backoff from 1 s (about 2 minutes in all). */
export const NOTIFY_ATTEMPTS = 8;
export const NOTIFY_BACKOFF_MS = 1_000;

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

export const OPERATE_ATTEMPTS = 3;

/**
 * An operate job's id is the operation's id (so a second enqueue of the same
 * operation is a no-op). Inspect jobs: work/batches/inspect-jobs.ts.
 */
export function operateJobId(operationId: string): string {
  return operationId;
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
