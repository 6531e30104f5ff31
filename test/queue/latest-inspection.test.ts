// A project's latest inspection (what `GET /projects/{id}/actions` and the
// web UI's run form read) follows the newest succeeded or failed outcome,
// whichever was recorded last, though a success is stored once (its fleet
// entry) and a failure only as its batch and time. A latest inspection
// written whole by an earlier version is still read, until a newer one
// replaces it; the fleet rows stay as they were.
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useQueueSuite } from '../support/queue-suite.js';
import { ACTOR, PLUGIN_ID, startWorker, untilBatchFinished } from '../support/workers.js';
import type { Installation } from '../support/workers.js';

const suite = useQueueSuite('latest inspection');

const APPEND = { id: 'append', name: 'Append', description: 'Appends a line to operations.log', risk: 'low' };
const PREVIEW = {
  id: 'preview',
  name: 'Preview append',
  description: 'Says what append would do (a dry run)',
  risk: 'none',
};

async function runBatch(installation: Installation): Promise<string> {
  const { runtime } = installation;
  const batch = await runtime.batches.create(PLUGIN_ID, 'all', ACTOR);
  await untilBatchFinished(runtime, batch.batchId, { timeoutMs: 60_000, results: false });
  return batch.batchId;
}

describe('the latest inspection of a project', () => {
  it('is the last recorded success or failure, and an earlier version’s whole copy is read', async () => {
    const installation = await suite.install('latest');
    const { runtime } = installation;
    const { redis, keys } = runtime.batches.store;
    const shop = await installation.addProject('shop');
    await installation.addProject('blog');
    await startWorker(installation, { concurrency: 2 });

    expect(await runtime.batches.actions('shop', PLUGIN_ID)).toEqual({
      pluginId: PLUGIN_ID,
      projectId: 'shop',
      actions: [],
    });

    const first = await runBatch(installation);
    const [firstRow] = (await runtime.batches.store.fleet(PLUGIN_ID)).filter(
      (row) => row.projectId === 'shop',
    );
    expect(Object.keys(firstRow!)).toEqual(['projectId', 'batchId', 'at', 'facts']);
    expect(firstRow!.batchId).toBe(first);
    expect(await runtime.batches.actions('shop', PLUGIN_ID)).toEqual({
      pluginId: PLUGIN_ID,
      projectId: 'shop',
      batchId: first,
      inspectedAt: firstRow!.at,
      actions: [APPEND, PREVIEW],
    });

    // A failure is the latest inspection; the fleet row keeps the last success.
    await writeFile(join(shop, 'inspect-error'), '');
    const failed = await runBatch(installation);
    expect((await runtime.batches.store.outcomesOf(failed, ['shop']))[0]!.status).toBe('failed');
    const afterFailure = await runtime.batches.actions('shop', PLUGIN_ID);
    expect(afterFailure).toMatchObject({ batchId: failed, actions: [] });
    expect(afterFailure.inspectedAt! > firstRow!.at).toBe(true);
    const slice = await runtime.batches.store.fleetSlice(PLUGIN_ID, undefined, 10);
    expect(slice.rows.find((row) => row.projectId === 'shop')).toEqual(firstRow);

    // A success after it is the latest again.
    await rm(join(shop, 'inspect-error'));
    const again = await runBatch(installation);
    expect(await runtime.batches.actions('shop', PLUGIN_ID)).toMatchObject({
      batchId: again,
      actions: [APPEND, PREVIEW],
    });
    expect(await redis.hexists(keys.latestInspection, `${PLUGIN_ID}/shop`)).toBe(0);

    // As an earlier version stored it: the whole outcome with its batch and time.
    const legacy = {
      batchId: 'batch_legacy',
      at: '2030-01-01T00:00:00.000Z',
      projectId: 'blog',
      status: 'succeeded',
      result: { summary: 'x', facts: [], actions: [{ ...APPEND, id: 'legacy' }], warnings: [] },
    };
    await redis.hset(keys.latestInspection, `${PLUGIN_ID}/blog`, JSON.stringify(legacy));
    expect(await runtime.batches.actions('blog', PLUGIN_ID)).toEqual({
      pluginId: PLUGIN_ID,
      projectId: 'blog',
      batchId: 'batch_legacy',
      inspectedAt: legacy.at,
      actions: [{ ...APPEND, id: 'legacy' }],
    });
    const last = await runBatch(installation);
    expect(await runtime.batches.actions('blog', PLUGIN_ID)).toMatchObject({
      batchId: last,
      actions: [APPEND, PREVIEW],
    });
  }, 180_000);
});
