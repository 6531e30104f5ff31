// Retention clean-up: finished batches and terminal operations older than
// the configured age are deleted, each by the store that owns their keys
// (BullMQ's own finished jobs expire by the queues' removeOnComplete /
// removeOnFail options).
import { DEFAULT_RETENTION, type RetentionConfig } from './jobs.js';
import type { WorkService } from './work.js';

export async function runRetention(
  work: WorkService,
  retention: RetentionConfig = DEFAULT_RETENTION,
): Promise<{ batches: number; operations: number }> {
  const cutoff = Date.now() - retention.recordsSeconds * 1_000;
  const batches = await work.batches.deleteFinishedBefore(cutoff);
  const operations = await work.operations.deleteFinishedBefore(cutoff);
  return { batches, operations };
}
