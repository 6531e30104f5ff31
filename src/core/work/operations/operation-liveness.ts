// A running operation whose worker stopped (kill -9, a lost host): its record
// says running until the job's lock lapses and a worker's stalled check ends it
// OUTCOME_UNKNOWN. Until then `op show` and GET /operations/:id say so, from the
// worker's board heartbeat (worker-slots.ts) and the job lock's remaining TTL.
import type { Redis } from 'ioredis';
import type { Queue } from 'bullmq';
import ms from 'ms';
import { workerSilentForMs } from '../../plugins/index.js';
import type { Keys } from '../../redis/index.js';
import { operateJobId } from './operate-job.js';
import type { OperationView, WorkerLost } from './operation-store.js';

/** The hint for a running operation whose worker no longer beats; undefined while it does. */
export async function workerLostOf(
  redis: Redis,
  keys: Keys,
  operateQueue: Queue,
  operation: OperationView,
): Promise<WorkerLost | undefined> {
  if (operation.state !== 'running' || !operation.worker || !operation.startedAt) return undefined;
  const silentForMs = await workerSilentForMs(redis, keys, operation.worker, Date.parse(operation.startedAt));
  if (silentForMs === undefined) return undefined;
  const lockLeft = await redis.pttl(`${operateQueue.toKey(operateJobId(operation.id))}:lock`);
  const lockExpiresInMs = Math.max(0, lockLeft);
  const who = operation.worker.replace(/^worker:/, '');
  const then =
    lockExpiresInMs > 0
      ? `the operation will be marked failed OUTCOME_UNKNOWN when its lock expires in ${ms(lockExpiresInMs)}`
      : 'its lock has expired: the next worker to check for stalled jobs marks it failed OUTCOME_UNKNOWN';
  return {
    worker: operation.worker,
    silentForMs,
    lockExpiresInMs,
    message: `worker ${who} has sent no heartbeat for ${ms(silentForMs)} (killed or cut off?); ${then}`,
  };
}
