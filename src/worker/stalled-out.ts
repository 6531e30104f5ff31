// A job whose workers died MAX_STALLS + 1 times is failed by BullMQ without
// running our code; its record must still end, or a batch / `op wait` never
// would. Every worker process hears these; recording is idempotent (HSETNX,
// atomic transitions).
import { QueueEvents } from 'bullmq';
import { QUEUE_NAMES, duplicateRedis } from '../core/redis/index.js';
import { inspectJobSchema } from '../core/work/batches/index.js';
import type { Runtime } from '../core/runtime/index.js';
import { MAX_STALLS, type Runners } from './queue-workers.js';
import type { WorkerLog } from './worker-log.js';

/** Listens until `close`. */
export function endStalledOut(
  runtime: Runtime,
  runners: Runners,
  log: WorkerLog,
): { close(): Promise<void> } {
  const { keys, queues, batches, bullConnection } = runtime;
  const queueEvents = (name: string) =>
    new QueueEvents(name, { connection: duplicateRedis(bullConnection), prefix: keys.bullPrefix });
  const onStalledOut = (events: QueueEvents, end: (jobId: string) => Promise<void>) =>
    events.on('failed', ({ jobId, failedReason }) => {
      if (!/stalled more than allowable limit/.test(failedReason)) return;
      end(jobId).catch((failure: Error) => log('record-failed', { error: failure.message }));
    });
  const inspect = queueEvents(QUEUE_NAMES.inspect);
  const operate = queueEvents(QUEUE_NAMES.operate);
  const onFillError = (error: Error) => log('fair-fill-failed', { error: error.message });
  onStalledOut(inspect, async (jobId) => {
    const data = inspectJobSchema.safeParse((await queues.inspect.getJob(jobId))?.data);
    if (!data.success) return;
    await runners.inspections.endStalled(data.data, MAX_STALLS);
    await batches.sliceEnded(data.data, jobId, onFillError);
  });
  onStalledOut(operate, (jobId) => runners.operations.endStalled(jobId, MAX_STALLS));
  return {
    async close() {
      await Promise.all([inspect.close(), operate.close()]);
    },
  };
}
