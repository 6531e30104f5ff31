// BullMQ wiring: queues, workers and queue events handed to the core's
// lifecycle services. Inspections go to the InspectionRunner, operations to
// the OperationRunner (at-most-once dispatch, end states, audit, project
// lock); this file holds no state machine of its own.
import { reconnectWorker, watchPulling } from './pull-watchdog.js';
import { DelayedError, QueueEvents, UnrecoverableError, Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import { RECONCILE_EVERY_MS, batchCancelMessage, inspectJobSchema } from '../core/work/batches/index.js';
import { healthJobSchema, maintenanceJobSchema } from '../core/work/upkeep/index.js';
import {
  REPORT_EVERY_MS,
  WorkerSlots,
  reportConfinement,
  withdrawConfinement,
} from '../core/plugins/index.js';
import { ABORT_REASONS, ConfinementUnavailableError, FinalJobError } from '../core/platform/index.js';
import { containment } from '../core/supervision/index.js';
import { QUEUE_NAMES, duplicateRedis } from '../core/redis/index.js';
import {
  operateJobSchema,
  operationActivityMessage,
  operationCancelMessage,
} from '../core/work/operations/index.js';
import { notifyJobSchema } from '../core/work/notify/index.js';
import type { Runtime } from '../core/runtime/index.js';
import { LockWatchedWorker } from './lock-watch.js';
import { OperationPriority } from './operation-priority.js';

export interface WorkerOptions {
  concurrency: number;
  /** A worker with a free slot that takes no job for this long while jobs wait reconnects (default 15 s). */
  pullStallMs?: number;
  /** BullMQ lock duration; a dead worker's jobs are taken again after about this long. */
  lockDurationMs?: number;
  stalledIntervalMs?: number;
  /** Project lock expiry; renewed while the operation runs. */
  projectLockMs?: number;
  /** How long a job waits for a busy project before it is tried again. */
  projectBusyDelayMs?: number;
  log?: (event: string, fields?: Record<string, unknown>) => void;
  /**
   * While an operation runs on any worker, start no new inspection call for
   * up to this long (operation-priority.ts); 0 turns it off.
   */
  operationPriorityMs?: number;
  /** How often this worker repairs what a crash left undone in rollouts (default 5 s). */
  rolloutSweepMs?: number;
}

export const DEFAULT_OPERATION_PRIORITY_MS = 2_000;

export interface RunningWorkers {
  identity: string;
  /** Take no new jobs, let running calls finish up to the deadline, then cancel them. */
  shutdown(deadlineMs: number): Promise<void>;
}

/** Each stall is a worker that died holding the job; after this many, BullMQ fails it. */
const MAX_STALLS = 3;

export async function startWorkers(runtime: Runtime, options: WorkerOptions): Promise<RunningWorkers> {
  const { batches, maintenance, queues, identity, redis, keys, bullConnection: connection } = runtime;
  const log = options.log ?? (() => {});
  // What this host gives plugin calls, checked before any job is taken, and reported for /healthz and plugin show.
  const confinement = containment();
  // --require-confinement: refuse to start unless every mechanism of kernel confinement is in force here.
  const required = runtime.plugins.options.callPolicy.requireConfinement;
  if (required && confinement.missing.length > 0) {
    throw new ConfinementUnavailableError(
      `--require-confinement: this worker cannot confine plugin calls fully and runs none; missing: ${confinement.missing.join('; ')}`,
    );
  }
  const report = () =>
    reportConfinement(redis, keys, {
      worker: identity,
      mechanism: confinement.mechanism,
      enforced: confinement.enforced,
      missing: confinement.missing,
      required,
      at: new Date().toISOString(),
    }).catch((error: Error) => log('confinement-report-failed', { error: error.message }));
  await report();
  const reporting = setInterval(() => void report(), REPORT_EVERY_MS);
  reporting.unref();
  const busyDelayMs = options.projectBusyDelayMs ?? 500;
  const lockDuration = options.lockDurationMs ?? 30_000;
  // What each slot runs, for `switchyard queue`; a call's slot of its plugin's caps outlives a
  // kill -9 of this worker by about as long as its job's lock.
  const slots = new WorkerSlots(redis, keys, identity);
  runtime.plugins.serveAsWorker({ capLeaseMs: lockDuration, slots });

  const priority = new OperationPriority(options.operationPriorityMs ?? DEFAULT_OPERATION_PRIORITY_MS);
  const inspections = batches.runner(priority);
  const operations = runtime.operations.runner({
    identity,
    projectLockMs: options.projectLockMs ?? 30_000,
    onError: (event, error) => log(event, { error: error.message }),
    // An operation of a rollout that ended starts the rollout's next ones (the sweep repairs a miss).
    onFinished: (operationId) =>
      void runtime.rollouts
        .operationEnded(operationId)
        .catch((error: Error) => log('rollout-advance-failed', { error: error.message })),
  });
  // What a crash left undone in any rollout (rollout-service.ts sweep): every worker, on a timer.
  const sweepRollouts = () =>
    runtime.rollouts.sweep().catch((error: Error) => log('rollout-sweep-failed', { error: error.message }));
  const rolloutSweep = setInterval(() => void sweepRollouts(), options.rolloutSweepMs ?? 5_000);
  rolloutSweep.unref();

  // Cancellation from any process arrives over pub/sub; the worker holding the operation aborts its call.
  const subscriber: Redis = duplicateRedis(redis);
  await subscriber.subscribe(keys.operationCancelChannel, keys.operationActivityChannel, keys.batchCancel);
  subscriber.on('message', (channel: string, message: string) => {
    if (channel === keys.operationActivityChannel) {
      const activity = operationActivityMessage.decode(message);
      return activity && priority.hear(activity);
    }
    if (channel === keys.batchCancel) {
      const batchId = batchCancelMessage.decode(message);
      return void (batchId && inspections.cancelBatch(batchId));
    }
    const operationId = operationCancelMessage.decode(message);
    if (operationId) operations.cancel(operationId);
  });

  const common = {
    connection,
    prefix: keys.bullPrefix,
    name: identity,
    lockDuration,
    stalledInterval: options.stalledIntervalMs ?? 30_000,
  };

  // A job whose lock is about to lapse unrenewed (Redis out of reach) has its call killed first.
  const onLapse = (queue: string) => (jobId: string) =>
    log('job-lock-lapsing', { queue, job: jobId, error: 'lock not renewed; the call was killed' });
  // The fair queue (fair-queue.ts): a slice's job that ended for good gives its place in the buffer to the next.
  const { fair } = batches;
  const refill = () =>
    void fair.fill().catch((error: Error) => log('fair-fill-failed', { error: error.message }));
  const sliceEnded = async (
    data: { batchId: string; start?: number | undefined },
    jobId: string | undefined,
    givenBack?: { start: number; count: number },
  ) => {
    if (data.start === undefined || jobId === undefined) return; // FIFO order: no slice record
    await fair.sliceEnded(data.batchId, jobId, givenBack);
    refill();
  };
  const inspectWorker: LockWatchedWorker = new LockWatchedWorker(
    QUEUE_NAMES.inspect,
    processorOf(
      () => inspectWorker,
      async (job, _token, signal) => {
        const data = parseOrFail(inspectJobSchema, job.data);
        const finalAttempt = job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
        // A slice whose worker is killed must not keep its place in the fair buffer (fair-pick.lua).
        if (data.start !== undefined && job.id !== undefined) await fair.taken(job.id, identity);
        try {
          const done = await inspections.runJob(data, {
            firstRun: job.attemptsStarted <= 1 && !job.stalledCounter,
            finalAttempt,
            signal,
          });
          await sliceEnded(data, job.id, done.givenBack);
          return done;
        } catch (error) {
          if (error instanceof FinalJobError) await sliceEnded(data, job.id).catch(() => {});
          throw error;
        }
      },
    ),
    { ...common, concurrency: options.concurrency, maxStalledCount: MAX_STALLS },
    onLapse(QUEUE_NAMES.inspect),
  );

  const operateWorker: LockWatchedWorker = new LockWatchedWorker(
    QUEUE_NAMES.operate,
    processorOf(
      () => operateWorker,
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
        await job.moveToDelayed(Date.now() + busyDelayMs, token);
        throw new DelayedError();
      },
    ),
    { ...common, concurrency: options.concurrency, maxStalledCount: MAX_STALLS },
    onLapse(QUEUE_NAMES.operate),
  );

  const healthWorker = new Worker(
    QUEUE_NAMES.health,
    async (job: Job, _token?: string, signal?: AbortSignal) =>
      maintenance.checkHealth(parseOrFail(healthJobSchema, job.data).pluginId, signal),
    { ...common, concurrency: 1 },
  );

  const maintenanceWorker = new Worker(
    QUEUE_NAMES.maintenance,
    async (job: Job) => {
      const task = parseOrFail(maintenanceJobSchema, job.data);
      log('maintenance', { task: task.task });
      return maintenance.run(task);
    },
    { ...common, concurrency: 1 },
  );

  // Webhook deliveries: one POST per attempt; a non-2xx answer throws, and BullMQ retries with backoff.
  const notifyWorker = new Worker(
    QUEUE_NAMES.notify,
    async (job: Job) =>
      runtime.webhooks.deliver(parseOrFail(notifyJobSchema, job.data).deliveryId, {
        finalAttempt: job.attemptsMade + 1 >= (job.opts.attempts ?? 1),
      }),
    { ...common, concurrency: Math.max(4, options.concurrency), maxStalledCount: MAX_STALLS },
  );

  // A job whose workers died MAX_STALLS + 1 times is failed by BullMQ without
  // running our code; its record must still end, or a batch / `op wait` never would.
  const queueEvents = (name: string) =>
    new QueueEvents(name, { connection: duplicateRedis(connection), prefix: keys.bullPrefix });
  const stallEvents = [queueEvents(QUEUE_NAMES.inspect), queueEvents(QUEUE_NAMES.operate)] as const;
  // Every worker process hears these; recording is idempotent (HSETNX, atomic transitions).
  const onStalledOut = (events: QueueEvents, end: (jobId: string) => Promise<void>) =>
    events.on('failed', ({ jobId, failedReason }) => {
      if (!/stalled more than allowable limit/.test(failedReason)) return;
      end(jobId).catch((failure: Error) => log('record-failed', { error: failure.message }));
    });
  onStalledOut(stallEvents[0], async (jobId) => {
    const data = inspectJobSchema.safeParse((await queues.inspect.getJob(jobId))?.data);
    if (!data.success) return;
    await inspections.endStalled(data.data, MAX_STALLS);
    await sliceEnded(data.data, jobId);
  });
  onStalledOut(stallEvents[1], (jobId) => operations.endStalled(jobId, MAX_STALLS));

  const workers = [inspectWorker, operateWorker, healthWorker, maintenanceWorker, notifyWorker];
  for (const worker of workers) {
    worker.on('error', (error) => log('worker-error', { queue: worker.name, error: error.message }));
    worker.on('failed', (job, error) =>
      log('job-failed', { queue: worker.name, job: job?.id, error: error.message }),
    );
  }
  await Promise.all(workers.map((worker) => worker.waitUntilReady()));
  // This worker's slots size the fair queue's buffer; each second it also repairs and fills it.
  const reconcile = async () => {
    await fair.heartbeat(identity, options.concurrency);
    const { repaired } = await fair.reconcile();
    if (repaired > 0) log('fair-slices-repaired', { repaired });
  };
  await reconcile().catch((error: Error) => log('fair-reconcile-failed', { error: error.message }));
  const reconciling = setInterval(
    () => void reconcile().catch((error: Error) => log('fair-reconcile-failed', { error: error.message })),
    RECONCILE_EVERY_MS,
  );
  reconciling.unref();
  // After a Redis failover a worker can stay connected but stop pulling: it watches itself.
  const watchdog = watchPulling(workers, reconnectWorker, { stallMs: options.pullStallMs ?? 15_000, log });
  log('worker-ready', { identity, concurrency: options.concurrency });

  return {
    identity,
    async shutdown(deadlineMs: number) {
      await watchdog.stop();
      clearInterval(reporting);
      clearInterval(rolloutSweep);
      clearInterval(reconciling);
      await fair.withdraw(identity).catch(() => {});
      await withdrawConfinement(redis, keys, identity).catch(() => {});
      await Promise.all(workers.map((worker) => worker.pause(true)));
      priority.close();
      const closing = Promise.all(workers.map((worker) => worker.close()));
      const deadline = new Promise<'deadline'>((resolve) =>
        setTimeout(() => resolve('deadline'), deadlineMs).unref(),
      );
      if ((await Promise.race([closing.then(() => 'closed' as const), deadline])) === 'deadline') {
        log('shutdown-deadline', { cancelling: operations.running });
        operations.abortAll(ABORT_REASONS.shutdown);
        for (const worker of workers) worker.cancelAllJobs(ABORT_REASONS.shutdown);
        await closing;
      }
      await Promise.all(stallEvents.map((events) => events.close()));
      await slots.close();
      subscriber.disconnect();
    },
  };
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
