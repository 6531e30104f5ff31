// Retention clean-up: finished batches and terminal operations older than
// the configured age are deleted (BullMQ's own finished jobs expire by the
// queues' removeOnComplete / removeOnFail options).
import type { Redis } from 'ioredis';
import { DEFAULT_RETENTION, type RetentionConfig } from './jobs.js';
import type { Keys } from './keys.js';
import { isTerminal } from './operations.js';
import type { WorkService } from './work.js';

export async function runRetention(
  redis: Redis,
  keys: Keys,
  work: WorkService,
  retention: RetentionConfig = DEFAULT_RETENTION,
): Promise<{ batches: number; operations: number }> {
  const cutoff = Date.now() - retention.recordsSeconds * 1_000;
  const batches = await work.batches.deleteFinishedBefore(cutoff);
  let operations = 0;
  for (const id of await redis.zrangebyscore(keys.operationsByTime, 0, cutoff)) {
    const state = await redis.hget(keys.operation(id), 'state');
    if (state !== null && !isTerminal(state)) continue;
    const idempotencyKey = await redis.hget(keys.operation(id), 'idempotencyKey');
    const multi = redis.multi().del(keys.operation(id)).zrem(keys.operationsByTime, id);
    if (idempotencyKey) multi.del(keys.idempotency(idempotencyKey));
    await multi.exec();
    operations += 1;
  }
  return { batches, operations };
}
