// Finished batches written straight through the core's batch store: the
// same batch-record script a worker's records go through (counts, the
// batch's end, the plugin's fleet facts), without running 10,000 plugin
// calls, so a browser test can measure a page over a large batch in seconds.
import { setTimeout as sleep } from 'node:timers/promises';
import type { Runtime } from '../../src/core/runtime/index.js';
import type { ProjectOutcome } from '../../src/core/work/batches/index.js';

/** A finished batch of `pluginId` over `projectIds`, each project's outcome from `outcomeOf`; its id. */
export async function seedBatch(
  runtime: Runtime,
  pluginId: string,
  projectIds: readonly string[],
  outcomeOf: (projectId: string, index: number) => ProjectOutcome,
): Promise<string> {
  const { store } = runtime.batches;
  const batch = await store.create(pluginId, [...projectIds], 'user:seed');
  for (let start = 0; start < projectIds.length; start += 1_000) {
    const slice = projectIds.slice(start, start + 1_000);
    await store.recordAll(
      batch.batchId,
      pluginId,
      slice.map((projectId, offset) => outcomeOf(projectId, start + offset)),
    );
  }
  await sleep(5); // the next batch is created a few milliseconds later: "previous" is well defined
  return batch.batchId;
}

/** A succeeded inspection with these facts (id → value) and warnings. */
export function inspected(
  projectId: string,
  facts: Record<string, string>,
  warnings: string[] = [],
): ProjectOutcome {
  return {
    projectId,
    status: 'succeeded',
    result: {
      summary: `${Object.keys(facts).length} facts`,
      facts: Object.entries(facts).map(([id, value]) => ({ id, label: id, value, source: 'seed' })),
      actions: [],
      warnings,
      observedAt: new Date().toISOString(),
    },
  };
}

/** A failed inspection as a plugin's JSON-RPC error (-32000) is recorded. */
export function failedWith(projectId: string, message: string): ProjectOutcome {
  return {
    projectId,
    status: 'failed',
    error: { code: 'PLUGIN_ERROR', message: `plugin error -32000: ${message}` },
  };
}

/** A cancelled inspection. */
export function cancelled(projectId: string): ProjectOutcome {
  return { projectId, status: 'cancelled', error: { code: 'CANCELLED', message: 'the batch was cancelled' } };
}
