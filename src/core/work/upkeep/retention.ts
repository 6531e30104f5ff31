// Retention clean-up: finished batches and terminal operations older than
// the configured age are deleted, each by the store that owns their keys
// (BullMQ's own finished jobs expire by the queues' removeOnComplete /
// removeOnFail options).
import { DEFAULT_RETENTION, type RetentionConfig } from '../../redis/index.js';
import type { BatchStore } from '../batches/index.js';
import type { OperationStore } from '../operations/index.js';

export async function runRetention(
  stores: { batches: { store: BatchStore }; operations: { store: OperationStore } },
  retention: RetentionConfig = DEFAULT_RETENTION,
): Promise<{ batches: number; operations: number }> {
  const cutoff = Date.now() - retention.recordsSeconds * 1_000;
  const batches = await stores.batches.store.deleteFinishedBefore(cutoff);
  const operations = await stores.operations.store.deleteFinishedBefore(cutoff);
  return { batches, operations };
}
