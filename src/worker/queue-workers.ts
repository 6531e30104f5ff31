// One BullMQ worker per queue, each handing its jobs to the core: inspections
// to the InspectionRunner (and the fair queue's slice bookkeeping), operations
// to the OperationRunner (at-most-once dispatch, end states, audit, project
// lock), health checks and maintenance to the maintenance service, webhook
// deliveries to the webhook service. No state machine of its own.
import { DelayedError, UnrecoverableError, Worker, type Job, type WorkerOptions } from 'bullmq';
import { FinalJobError } from '../core/platform/index.js';
import { QUEUE_NAMES } from '../core/redis/index.js';
import { inspectJobSchema, type InspectionRunner } from '../core/work/batches/index.js';
import { notifyJobSchema } from '../core/work/notify/index.js';
import { operateJobSchema, type OperationRunner } from '../core/work/operations/index.js';
import { healthJobSchema, maintenanceJobSchema } from '../core/work/upkeep/index.js';
import type { Runtime } from '../core/runtime/index.js';
import { LockWatchedWorker } from './lock-watch.js';
import type { WorkerLog } from './worker-log.js';

/** Each stall is a worker that died holding the job; after this many, BullMQ fails it. */
export const MAX_STALLS = 3;

export interface QueueWorkerSettings {
  concurrency: number;
  lockDurationMs: number;
  stalledIntervalMs: number;
  /** How long a job waits for a busy project before it is tried again. */
  projectBusyDelayMs: number;
  log: WorkerLog;
}

export interface Runners {
  inspections: InspectionRunner;
  operations: OperationRunner;
}

/** The five workers, each logging its errors and failed jobs; not yet known to be ready. */
export function createQueueWorkers(
  runtime: Runtime,
  runners: Runners,
  settings: QueueWorkerSettings,
): Worker[] {
  const common: Common = {
    connection: runtime.bullConnection,
    prefix: runtime.keys.bullPrefix,
    name: runtime.identity,
    lockDuration: settings.lockDurationMs,
    stalledInterval: settings.stalledIntervalMs,
  };
  const inspect = inspectWorker(runtime, runners.inspections, settings, common);
  const operate = operateWorker(runtime, runners.operations, settings, common);
  const all: Worker[] = [inspect, operate, ...upkeepWorkers(runtime, settings, common)];
  for (const worker of all) {
    worker.on('error', (error) => settings.log('worker-error', { queue: worker.name, error: error.message }));
    worker.on('failed', (job, error) =>
      settings.log('job-failed', { queue: worker.name, job: job?.id, error: error.message }),
    );
  }
  return all;
}

/** What every queue's worker shares. */
type Common = Pick<WorkerOptions, 'connection' | 'prefix' | 'name' | 'stalledInterval'> & {
  lockDuration: number;
};

/** A job whose lock is about to lapse unrenewed (Redis out of reach) has its call killed first. */
function onLapse(queue: string, log: WorkerLog) {
  return (jobId: string) =>
    log('job-lock-lapsing', { queue, job: jobId, error: 'lock not renewed; the call was killed' });
}

function inspectWorker(
  runtime: Runtime,
  inspections: InspectionRunner,
  settings: QueueWorkerSettings,
  common: Common,
): LockWatchedWorker {
  const { batches, identity } = runtime;
  const onFillError = (error: Error) => settings.log('fair-fill-failed', { error: error.message });
  const worker: LockWatchedWorker = new LockWatchedWorker(
    QUEUE_NAMES.inspect,
    processorOf(
      () => worker,
      async (job, _token, signal) => {
        const data = parseOrFail(inspectJobSchema, job.data);
        // The holder mark goes out with the job's first reads, not one round trip before them;
        // a mark that failed fails the job after its run (retried: what was recorded is skipped).
        const marked = batches.sliceTaken(data, job.id, identity);
        marked.catch(() => {});
        try {
          const done = await inspections.runJob(data, {
            firstRun: job.attemptsStarted <= 1 && !job.stalledCounter,
            finalAttempt: job.attemptsMade + 1 >= (job.opts.attempts ?? 1),
            signal,
          });
          await marked;
          await batches.sliceEnded(data, job.id, onFillError, done.givenBack);
          return done;
        } catch (error) {
          if (error instanceof FinalJobError)
            await batches.sliceEnded(data, job.id, onFillError).catch(() => {});
          throw error;
        }
      },
    ),
    { ...common, concurrency: settings.concurrency, maxStalledCount: MAX_STALLS },
    onLapse(QUEUE_NAMES.inspect, settings.log),
  );
  return worker;
}

function operateWorker(
  runtime: Runtime,
  operations: OperationRunner,
  settings: QueueWorkerSettings,
  common: Common,
): LockWatchedWorker {
  const worker: LockWatchedWorker = new LockWatchedWorker(
    QUEUE_NAMES.operate,
    processorOf(
      () => worker,
      async (job, token, signal) => {
        const { operationId } = parseOrFail(operateJobSchema, job.data);
        // The requesters' turns move on (operation-turns.ts); a job taken again changes nothing.
        await runtime.operations.turnTaken(job.opts.priority);
        const outcome = await operations.run(operationId, {
          attemptsMade: job.attemptsMade,
          attempts: job.opts.attempts ?? 1,
          signal,
        });
        if (outcome !== 'busy') return outcome;
        // Another operation holds this project: wait without spinning or using an attempt.
        await job.moveToDelayed(Date.now() + settings.projectBusyDelayMs, token);
        throw new DelayedError();
      },
    ),
    { ...common, concurrency: settings.concurrency, maxStalledCount: MAX_STALLS },
    onLapse(QUEUE_NAMES.operate, settings.log),
  );
  return worker;
}

/** Health checks, maintenance tasks and webhook deliveries. */
function upkeepWorkers(runtime: Runtime, settings: QueueWorkerSettings, common: Common): Worker[] {
  const { maintenance } = runtime;
  const health = new Worker(
    QUEUE_NAMES.health,
    async (job: Job, _token?: string, signal?: AbortSignal) =>
      maintenance.checkHealth(parseOrFail(healthJobSchema, job.data).pluginId, signal),
    { ...common, concurrency: 1 },
  );
  const tasks = new Worker(
    QUEUE_NAMES.maintenance,
    async (job: Job) => {
      const task = parseOrFail(maintenanceJobSchema, job.data);
      settings.log('maintenance', { task: task.task });
      return maintenance.run(task);
    },
    { ...common, concurrency: 1 },
  );
  // Webhook deliveries: one POST per attempt; a non-2xx answer throws, and BullMQ retries with backoff.
  const notify = new Worker(
    QUEUE_NAMES.notify,
    async (job: Job) =>
      runtime.webhooks.deliver(parseOrFail(notifyJobSchema, job.data).deliveryId, {
        finalAttempt: job.attemptsMade + 1 >= (job.opts.attempts ?? 1),
      }),
    { ...common, concurrency: Math.max(4, settings.concurrency), maxStalledCount: MAX_STALLS },
  );
  return [health, tasks, notify];
}

/**
 * The processor BullMQ runs. It has three parameters, so BullMQ hands it the
 * job's abort signal (it does so only then); it watches the job's lock while
 * the job runs; a core runner's FinalJobError becomes BullMQ's
 * UnrecoverableError (no further attempt).
 */
function processorOf<R>(
  worker: () => LockWatchedWorker,
  run: (job: Job, token: string | undefined, signal: AbortSignal | undefined) => Promise<R>,
): (job: Job, token?: string, signal?: AbortSignal) => Promise<R> {
  return async (job: Job, token?: string, signal?: AbortSignal) => {
    worker().watch(job);
    try {
      return await run(job, token, signal);
    } catch (error) {
      if (error instanceof FinalJobError) throw new UnrecoverableError(error.message);
      throw error;
    } finally {
      worker().unwatch(job.id);
    }
  };
}

function parseOrFail<T>(
  schema: {
    safeParse(value: unknown): { success: true; data: T } | { success: false; error: { message: string } };
  },
  value: unknown,
): T {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw new UnrecoverableError(`malformed job payload: ${parsed.error.message}`);
  return parsed.data;
}
