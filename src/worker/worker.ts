// A worker process's work, started in order: confinement checked and
// reported, the runners of inspections and operations, cancellation over
// pub/sub, one BullMQ worker per queue (queue-workers.ts), the ends of jobs
// whose workers all died (stalled-out.ts), the timers of the fair queue and
// rollouts (worker-upkeep.ts), and a watchdog of its own pulling. Shutdown
// undoes it in reverse. No state machine of its own: the core holds those.
import type { Worker } from 'bullmq';
import { ABORT_REASONS } from '../core/platform/index.js';
import { WorkerSlots } from '../core/plugins/index.js';
import type { Runtime } from '../core/runtime/index.js';
import type { OperationRunner } from '../core/work/operations/index.js';
import { OperationPriority } from './operation-priority.js';
import { reconnectWorker, watchPulling } from './pull-watchdog.js';
import { createQueueWorkers } from './queue-workers.js';
import { endStalledOut } from './stalled-out.js';
import { listenForCancels } from './worker-channels.js';
import { confineAndReport } from './worker-confinement.js';
import type { WorkerLog } from './worker-log.js';
import { startUpkeep } from './worker-upkeep.js';

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
  log?: WorkerLog;
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

export async function startWorkers(runtime: Runtime, options: WorkerOptions): Promise<RunningWorkers> {
  const { identity, redis, keys } = runtime;
  const log: WorkerLog = options.log ?? (() => {});
  const lockDurationMs = options.lockDurationMs ?? 30_000;
  const confinement = await confineAndReport(runtime, log);
  // What each slot runs, for `switchyard queue`; a call's slot of its plugin's caps outlives a
  // kill -9 of this worker by about as long as its job's lock.
  const slots = new WorkerSlots(redis, keys, identity);
  runtime.plugins.serveAsWorker({ capLeaseMs: lockDurationMs, slots });
  const priority = new OperationPriority(options.operationPriorityMs ?? DEFAULT_OPERATION_PRIORITY_MS);
  const runners = {
    inspections: runtime.batches.runner(priority),
    operations: runtime.operations.runner({
      identity,
      projectLockMs: options.projectLockMs ?? 30_000,
      onError: (event, error) => log(event, { error: error.message }),
      // An operation of a rollout that ended starts the rollout's next ones (the sweep repairs a miss).
      onFinished: (operationId) =>
        void runtime.rollouts
          .operationEnded(operationId)
          .catch((error: Error) => log('rollout-advance-failed', { error: error.message })),
    }),
  };
  const subscriber = await listenForCancels(runtime, { priority, ...runners });
  const workers = createQueueWorkers(runtime, runners, {
    concurrency: options.concurrency,
    lockDurationMs,
    stalledIntervalMs: options.stalledIntervalMs ?? 30_000,
    projectBusyDelayMs: options.projectBusyDelayMs ?? 500,
    log,
  });
  const stalledOut = endStalledOut(runtime, runners, log);
  await Promise.all(workers.map((worker) => worker.waitUntilReady()));
  const upkeep = await startUpkeep(runtime, {
    concurrency: options.concurrency,
    rolloutSweepMs: options.rolloutSweepMs ?? 5_000,
    log,
  });
  // After a Redis failover a worker can stay connected but stop pulling: it watches itself.
  const watchdog = watchPulling(workers, reconnectWorker, { stallMs: options.pullStallMs ?? 15_000, log });
  log('worker-ready', { identity, concurrency: options.concurrency });

  return {
    identity,
    async shutdown(deadlineMs: number) {
      await watchdog.stop();
      await upkeep.stop();
      await confinement.stop();
      await drain(workers, runners.operations, deadlineMs, log);
      priority.close();
      await stalledOut.close();
      await slots.close();
      subscriber.disconnect();
    },
  };
}

/** No new jobs; running calls finish until the deadline, then are cancelled. */
async function drain(
  workers: Worker[],
  operations: OperationRunner,
  deadlineMs: number,
  log: WorkerLog,
): Promise<void> {
  await Promise.all(workers.map((worker) => worker.pause(true)));
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
}
