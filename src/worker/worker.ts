// BullMQ workers: every job goes through the core's PluginService, so trust,
// the fingerprint on this machine's disk and project trust are re-verified at
// execution time. Operations follow the at-most-once rule: marked dispatched
// durably before project.operate is written; a re-run that finds the mark ends
// OUTCOME_UNKNOWN instead of running the plugin again.
import { duplicateRedis } from '../core/redis.js';
import { DelayedError, QueueEvents, UnrecoverableError, Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import { appendAudit } from '../core/audit.js';
import type { Core } from '../core/context.js';
import { SwitchyardError, errorCode } from '../core/errors.js';
import {
  QUEUE_NAMES,
  healthJobSchema,
  inspectJobSchema,
  maintenanceJobSchema,
  operateJobSchema,
  type InspectJob,
  type Queues,
  type RetentionConfig,
  INSPECT_ATTEMPTS,
  INSPECT_BACKOFF_MS,
} from '../core/jobs.js';
import { OUTCOME_UNKNOWN, isTerminal, type OperationRecord } from '../core/operations.js';
import { boundedMessage } from '../core/redact.js';
import { runRetention } from '../core/retention.js';
import { ScheduleStore } from '../core/schedules.js';
import type { WorkService } from '../core/work.js';
import {
  OperationPriority,
  endedMessage,
  operationPriorityChannel,
  startedMessage,
} from './operation-priority.js';

export interface WorkerOptions {
  concurrency: number;
  /** BullMQ lock duration; a dead worker's jobs are taken again after about this long. */
  lockDurationMs?: number;
  stalledIntervalMs?: number;
  /** Project lock expiry; renewed while the operation runs. */
  projectLockMs?: number;
  /** How long a job waits for a busy project before it is tried again. */
  projectBusyDelayMs?: number;
  log?: (event: string, fields?: Record<string, unknown>) => void;
  retention?: RetentionConfig;
  /**
   * While an operation runs on any worker, start no new inspection call for
   * up to this long (operation-priority.ts); 0 turns it off.
   */
  operationPriorityMs?: number;
}

export const DEFAULT_OPERATION_PRIORITY_MS = 2_000;

export interface RunningWorkers {
  identity: string;
  /** Take no new jobs, let running calls finish up to the deadline, then cancel them. */
  shutdown(deadlineMs: number): Promise<void>;
}

class DispatchRefused extends Error {
  constructor(readonly reason: string) {
    super(`operation not dispatched: ${reason}`);
  }
}

export async function startWorkers(
  core: Core,
  work: WorkService,
  queues: Queues,
  connection: Redis,
  options: WorkerOptions,
): Promise<RunningWorkers> {
  const identity = core.plugins.options.processActor;
  const log = options.log ?? (() => {});
  const projectLockMs = options.projectLockMs ?? 30_000;
  const busyDelayMs = options.projectBusyDelayMs ?? 500;
  const running = new Map<string, AbortController>();
  const schedules = new ScheduleStore(core.redis, core.keys);

  const priority = new OperationPriority(options.operationPriorityMs ?? DEFAULT_OPERATION_PRIORITY_MS);
  const priorityChannel = operationPriorityChannel(core.keys.prefix);
  const announce = (message: string) =>
    void core.redis
      .publish(priorityChannel, message)
      .catch((error: Error) => log('publish-failed', { error: error.message }));

  // Cancellation from any process arrives over pub/sub; the worker holding the operation aborts its call.
  const subscriber: Redis = duplicateRedis(core.redis);
  await subscriber.subscribe(work.operations.cancelChannel, priorityChannel);
  subscriber.on('message', (channel: string, message: string) => {
    if (channel === priorityChannel) return priority.hear(message);
    const id = message.slice(message.lastIndexOf(':') + 1);
    running.get(id)?.abort('cancelled');
  });

  const common = {
    connection,
    prefix: core.keys.bullPrefix,
    name: identity,
    lockDuration: options.lockDurationMs ?? 30_000,
    stalledInterval: options.stalledIntervalMs ?? 30_000,
  };

  const inspectWorker = new Worker(
    QUEUE_NAMES.inspect,
    async (job: Job, _token?: string, signal?: AbortSignal) => {
      const data = parseOrFail(inspectJobSchema, job.data);
      // A job taken again (retry, dead worker) skips what is already recorded.
      const firstRun = job.attemptsStarted <= 1 && !job.stalledCounter;
      const pending = firstRun
        ? data.projectIds
        : await work.batches.unrecorded(data.batchId, data.projectIds);
      try {
        for (const projectId of pending) {
          if (signal?.aborted) throw new Error('worker shutting down; the rest of this job will be retried');
          await inspectOne(data.batchId, data.pluginId, projectId, signal);
        }
      } catch (error) {
        // Not a plugin outcome (Redis unreachable, shutdown): the job is retried and
        // resumes where it stopped; after its last attempt the rest is recorded failed.
        if (signal?.aborted || job.attemptsMade + 1 < (job.opts.attempts ?? 1)) throw error;
        await recordRestFailed(data, errorCode(error), boundedMessage(messageOf(error)));
        throw new UnrecoverableError(messageOf(error));
      }
      return { inspected: pending.length };
    },
    { ...common, concurrency: options.concurrency, maxStalledCount: MAX_STALLS },
  );

  /** Records every project of an inspect job that has no outcome yet as failed. */
  async function recordRestFailed(data: InspectJob, code: string, message: string) {
    for (const projectId of await work.batches.unrecorded(data.batchId, data.projectIds)) {
      await work.batches.record(data.batchId, data.pluginId, {
        projectId,
        status: 'failed',
        error: { code, message },
      });
    }
  }

  /**
   * One project of a batch: retried with exponential backoff for transient
   * failures only, then recorded once (succeeded or failed).
   */
  async function inspectOne(batchId: string, pluginId: string, projectId: string, signal?: AbortSignal) {
    for (let attempt = 1; ; attempt += 1) {
      await priority.clear(signal); // every attempt is a new plugin call
      try {
        const result = await core.plugins.inspect(pluginId, projectId, signal ? { signal } : {});
        await work.batches.record(batchId, pluginId, { projectId, status: 'succeeded', result });
        return;
      } catch (error) {
        if (signal?.aborted) throw new Error('worker shutting down; the inspection will be retried');
        if (!(error instanceof SwitchyardError)) throw error;
        if (isTransient(error) && attempt < INSPECT_ATTEMPTS) {
          await sleep(INSPECT_BACKOFF_MS * 2 ** (attempt - 1), signal);
          continue;
        }
        await work.batches.record(batchId, pluginId, {
          projectId,
          status: 'failed',
          error: { code: errorCode(error), message: boundedMessage(messageOf(error)) },
        });
        return;
      }
    }
  }

  const operateWorker = new Worker(
    QUEUE_NAMES.operate,
    async (job: Job, token?: string, signal?: AbortSignal) => {
      const { operationId } = parseOrFail(operateJobSchema, job.data);
      const operation = await work.operations.get(operationId);
      if (!operation) throw new UnrecoverableError(`operation ${operationId} does not exist`);
      if (isTerminal(operation.state)) return { state: operation.state };
      if (operation.state === 'running' && operation.dispatched) return endOutcomeUnknown(operation);

      const lock = await work.operations.acquireProjectLock(operation.projectId, operation.id, projectLockMs);
      if (!lock) {
        // Another operation holds this project: wait without spinning or using an attempt.
        await job.moveToDelayed(Date.now() + busyDelayMs, token);
        throw new DelayedError();
      }
      const controller = new AbortController();
      const onShutdown = () => controller.abort('shutdown');
      signal?.addEventListener('abort', onShutdown, { once: true });
      running.set(operation.id, controller);
      announce(startedMessage(operation.id));
      const renew = setInterval(
        () => {
          void work.operations.renewProjectLock(operation.projectId, lock, projectLockMs).then((held) => {
            if (!held) controller.abort('lock-lost');
          });
        },
        Math.max(1_000, Math.floor(projectLockMs / 3)),
      );
      try {
        return await runOperation(operation, lock, controller, job);
      } finally {
        clearInterval(renew);
        running.delete(operation.id);
        announce(endedMessage(operation.id));
        signal?.removeEventListener('abort', onShutdown);
        await work.operations.releaseProjectLock(operation.projectId, lock);
      }
    },
    { ...common, concurrency: options.concurrency, maxStalledCount: MAX_STALLS },
  );

  async function runOperation(
    operation: OperationRecord,
    lock: string,
    controller: AbortController,
    job: Job,
  ) {
    const started = await work.operations.transition(
      operation.id,
      ['queued', 'running'],
      'running',
      { startedAt: new Date().toISOString(), worker: identity },
      { refuseIfCancelRequested: true },
    );
    if (started.outcome === 'cancel-requested')
      return endCancelled(operation.id, 'cancelled before it started');
    if (started.outcome !== 'ok') return { state: started.previous };
    // A cancel published before we registered is visible in the record.
    if ((await work.operations.get(operation.id))?.cancelRequested) controller.abort('cancelled');

    try {
      const result = await core.plugins.operate(
        operation.pluginId,
        operation.projectId,
        operation.action,
        operation.input,
        {
          signal: controller.signal,
          beforeSend: async () => {
            const marked = await work.operations.markDispatched(
              operation.id,
              operation.projectId,
              lock,
              identity,
            );
            if (marked !== 'ok') throw new DispatchRefused(marked);
          },
        },
      );
      await work.operations.transition(operation.id, ['running'], result.status, {
        result: JSON.stringify(result),
        ...(result.status === 'failed'
          ? { errorCode: 'PLUGIN_REPORTED_FAILURE', errorMessage: boundedMessage(result.summary) }
          : {}),
      });
      await auditFinished(operation, result.status);
      return { state: result.status };
    } catch (error) {
      const reason = controller.signal.reason as string | undefined;
      if (
        reason === 'cancelled' ||
        (error instanceof DispatchRefused && error.reason === 'cancel-requested')
      ) {
        return endCancelled(operation.id, 'cancelled while running; the plugin process group was killed');
      }
      if (error instanceof DispatchRefused) {
        // Nothing was sent to the plugin. Lost the project lock: try again later.
        if (error.reason === 'lock-lost')
          throw new Error('lost the project lock before dispatch; the operation will be retried');
        // Someone else finished or runs it: leave the record as it is.
        return { state: (await work.operations.get(operation.id))?.state ?? 'unknown' };
      }
      const latest = await work.operations.get(operation.id);
      const dispatched = latest?.dispatched === true;
      if ((reason === 'shutdown' || reason === 'lock-lost') && !dispatched) {
        throw new Error(`the call was stopped (${reason}) before dispatch; the operation will be retried`);
      }
      if (reason === 'shutdown' || reason === 'lock-lost') {
        return endFailed(
          operation,
          OUTCOME_UNKNOWN,
          `the worker stopped the call (${reason}) after project.operate was sent; the plugin may have acted — check the project before running it again`,
        );
      }
      const attempts = job.opts.attempts ?? 1;
      // Before dispatch a retry is safe: for a transient plugin fault, or an outage of Redis itself.
      const retryable = isTransient(error) || !(error instanceof SwitchyardError);
      if (!dispatched && retryable && job.attemptsMade + 1 < attempts) throw error;
      await endFailed(operation, errorCode(error), boundedMessage(messageOf(error)));
      throw new UnrecoverableError(messageOf(error));
    }
  }

  async function endOutcomeUnknown(operation: OperationRecord) {
    // The dead worker's project lock would block the project until it expires.
    await work.operations.releaseProjectLockOf(operation.projectId, operation.id);
    return endFailed(
      operation,
      OUTCOME_UNKNOWN,
      `the worker running this operation (${operation.dispatchedBy ?? 'unknown'}) stopped after project.operate was sent; the plugin may have acted — check the project before running it again`,
    );
  }

  async function endFailed(operation: OperationRecord, code: string, message: string) {
    await work.operations.transition(operation.id, ['queued', 'running'], 'failed', {
      errorCode: code,
      errorMessage: message,
    });
    await auditFinished(operation, 'failed', code);
    return { state: 'failed' };
  }

  async function endCancelled(id: string, message: string) {
    await work.operations.transition(id, ['queued', 'running'], 'cancelled', {
      errorCode: 'CANCELLED',
      errorMessage: message,
    });
    await appendAudit(core.redis, core.keys, {
      actor: identity,
      action: 'operation.cancelled',
      target: id,
      detail: {},
    });
    return { state: 'cancelled' };
  }

  async function auditFinished(operation: OperationRecord, state: string, code?: string) {
    await appendAudit(core.redis, core.keys, {
      actor: identity,
      action: 'operation.finished',
      target: operation.id,
      detail: {
        state,
        ...(code ? { errorCode: code } : {}),
        pluginId: operation.pluginId,
        projectId: operation.projectId,
      },
    });
  }

  const healthWorker = new Worker(
    QUEUE_NAMES.health,
    async (job: Job, _token?: string, signal?: AbortSignal) => {
      const data = parseOrFail(healthJobSchema, job.data);
      const ids = data.pluginId ? [data.pluginId] : await enabledPluginIds(core);
      const results: Record<string, string> = {};
      for (const id of ids) {
        try {
          results[id] = (await core.plugins.health(id, signal ? { signal } : {})).status;
        } catch (error) {
          results[id] = `failed: ${errorCode(error)}`;
        }
      }
      return results;
    },
    { ...common, concurrency: 1 },
  );

  const maintenanceWorker = new Worker(
    QUEUE_NAMES.maintenance,
    async (job: Job) => {
      const data = parseOrFail(maintenanceJobSchema, job.data);
      log('maintenance', { task: data.task });
      switch (data.task) {
        case 'rediscover':
          return { plugins: (await core.plugins.refresh(identity)).length };
        case 'retention':
          return runRetention(core.redis, core.keys, work, options.retention);
        case 'health-checks': {
          await appendAudit(core.redis, core.keys, {
            actor: identity,
            action: 'scheduler.health-checks',
            target: '*',
            detail: { job: job.id },
          });
          const ids = await enabledPluginIds(core);
          await queues.health.addBulk(ids.map((pluginId) => ({ name: 'health', data: { pluginId } })));
          return { plugins: ids.length };
        }
        case 'recurring-inspection': {
          const schedule = await schedules.get(data.scheduleId);
          if (!schedule) return { skipped: 'schedule removed' };
          const batch = await work.createBatch(
            schedule.pluginId,
            schedule.projects,
            `scheduler:${schedule.id}`,
          );
          return { batchId: batch.batchId };
        }
      }
    },
    { ...common, concurrency: 1 },
  );

  // A job whose workers died MAX_STALLS + 1 times is failed by BullMQ without
  // running our code; its record must still end, or a batch / `op wait` never would.
  const stallEvents = [
    new QueueEvents(QUEUE_NAMES.inspect, {
      connection: duplicateRedis(connection),
      prefix: core.keys.bullPrefix,
    }),
    new QueueEvents(QUEUE_NAMES.operate, {
      connection: duplicateRedis(connection),
      prefix: core.keys.bullPrefix,
    }),
  ] as const;
  // Every worker process hears these; recording is idempotent (HSETNX, atomic transitions).
  stallEvents[0].on('failed', ({ jobId, failedReason }) => {
    if (!isStallFailure(failedReason)) return;
    void (async () => {
      const job = await queues.inspect.getJob(jobId);
      const data = inspectJobSchema.safeParse(job?.data);
      if (!data.success) return;
      await recordRestFailed(
        data.data,
        'WORKER_LOST',
        `the workers running this inspection died ${MAX_STALLS + 1} times`,
      );
    })().catch((failure: Error) => log('record-failed', { error: failure.message }));
  });
  stallEvents[1].on('failed', ({ jobId, failedReason }) => {
    if (!isStallFailure(failedReason)) return;
    void (async () => {
      const operation = await work.operations.get(jobId);
      if (!operation || isTerminal(operation.state)) return;
      if (operation.dispatched) return void (await endOutcomeUnknown(operation));
      await work.operations.releaseProjectLockOf(operation.projectId, operation.id);
      await endFailed(
        operation,
        'WORKER_LOST',
        `the workers running this operation died ${MAX_STALLS + 1} times before it was sent to the plugin; nothing was run`,
      );
    })().catch((failure: Error) => log('record-failed', { error: failure.message }));
  });

  const workers = [inspectWorker, operateWorker, healthWorker, maintenanceWorker];
  for (const worker of workers) {
    worker.on('error', (error) => log('worker-error', { queue: worker.name, error: error.message }));
    worker.on('failed', (job, error) =>
      log('job-failed', { queue: worker.name, job: job?.id, error: error.message }),
    );
  }
  await Promise.all(workers.map((worker) => worker.waitUntilReady()));
  log('worker-ready', { identity, concurrency: options.concurrency });

  return {
    identity,
    async shutdown(deadlineMs: number) {
      await Promise.all(workers.map((worker) => worker.pause(true)));
      priority.close();
      const closing = Promise.all(workers.map((worker) => worker.close()));
      const deadline = new Promise<'deadline'>((resolve) =>
        setTimeout(() => resolve('deadline'), deadlineMs).unref(),
      );
      if ((await Promise.race([closing.then(() => 'closed' as const), deadline])) === 'deadline') {
        log('shutdown-deadline', { cancelling: running.size });
        for (const controller of running.values()) controller.abort('shutdown');
        for (const worker of workers) worker.cancelAllJobs('shutdown');
        await closing;
      }
      await Promise.all(stallEvents.map((events) => events.close()));
      subscriber.disconnect();
    },
  };
}

async function enabledPluginIds(core: Core): Promise<string[]> {
  return (await core.plugins.list())
    .filter((plugin) => plugin.enabled && plugin.available)
    .map((plugin) => plugin.id);
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

/** Each stall is a worker that died holding the job; after this many, BullMQ fails it. */
const MAX_STALLS = 3;

function isStallFailure(reason: string): boolean {
  return /stalled more than allowable limit/.test(reason);
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
  });
}

function isTransient(error: unknown): boolean {
  return error instanceof SwitchyardError ? error.transient : false;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
