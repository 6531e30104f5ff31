// Retention clean-up: each plugin's finished batches its retention policy
// (retention-policy.ts, `plugin set --retention-batches/--retention-days`) no
// longer keeps, and terminal operations older than the configured age, are
// deleted, each by the store that owns their keys (BullMQ's own finished jobs
// expire by the queues' removeOnComplete / removeOnFail options). What a run
// deleted is audited (`retention.deleted`, counts by plugin).
import type { Redis } from 'ioredis';
import { appendAudit } from '../../access/index.js';
import { DEFAULT_RETENTION, type Keys, type RetentionConfig } from '../../redis/index.js';
import type { PluginService } from '../../plugins/index.js';
import type { BatchStore } from '../batches/index.js';
import type { OperationStore } from '../operations/index.js';

const DAY_MS = 86_400_000;

export type RetentionReport = {
  batches: number;
  operations: number;
  /** Batches deleted, by plugin (only plugins that lost any). */
  byPlugin: Record<string, number>;
};

export async function runRetention(
  stores: {
    redis: Redis;
    keys: Keys;
    plugins: Pick<PluginService, 'retentionPolicies'>;
    batches: { store: BatchStore };
    operations: { store: OperationStore };
    identity?: string;
  },
  retention: RetentionConfig = DEFAULT_RETENTION,
): Promise<RetentionReport> {
  const now = Date.now();
  const cutoff = now - retention.recordsSeconds * 1_000;
  const policies = await stores.plugins.retentionPolicies();
  const deleted = await stores.batches.store.deleteUnkept((pluginId) => {
    const policy = policies.get(pluginId);
    return {
      keep: policy?.batches ?? 0,
      cutoffMs: policy?.days === undefined ? cutoff : now - policy.days * DAY_MS,
    };
  });
  const operations = await stores.operations.store.deleteFinishedBefore(cutoff);
  const byPlugin = Object.fromEntries(deleted);
  const batches = [...deleted.values()].reduce((sum, count) => sum + count, 0);
  if (batches + operations > 0) {
    await appendAudit(stores.redis, stores.keys, {
      actor: stores.identity ?? 'retention',
      action: 'retention.deleted',
      target: '*',
      detail: { batches, operations, byPlugin },
    });
  }
  return { batches, operations, byPlugin };
}
