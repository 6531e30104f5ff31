// Retention asks the stores to delete: terminal operations (with their
// idempotency keys) and finished batches older than the cut-off go, except
// the newest two finished batches of each plugin (what `batch diff` and the
// web UI's comparison need); an operation still queued stays.
import { describe, expect, it } from 'vitest';
import { runRetention } from '../../src/core/work/upkeep/retention.js';
import { useRuntimeSuite } from '../support/runtime-suite.js';
import { sleep } from '../support/wait.js';

const suite = useRuntimeSuite('retention');

describe('retention', () => {
  it('deletes terminal operations with their idempotency keys and old finished batches; keeps the newest two per plugin and the rest', async () => {
    const runtime = suite.runtime();
    const operations = runtime.operations.store;
    const batches = runtime.batches.store;
    const request = { pluginId: 'p', projectId: 'x', action: 'a', input: null, requestedBy: 'test' };
    const done = await operations.create({ ...request, idempotencyKey: 'k-done' });
    await operations.transition(done.operation.id, ['queued'], 'failed', { errorCode: 'X' });
    const waiting = await operations.create({ ...request, idempotencyKey: 'k-waiting' });
    const finished = await batches.create('p', [], 'test');
    await sleep(5);
    const kept = [await batches.create('p', [], 'test')];
    await sleep(5);
    kept.push(await batches.create('p', [], 'test'));
    const otherPlugin = await batches.create('q', [], 'test');
    await sleep(5);

    expect(await runRetention(runtime, { recordsSeconds: 0, failedJobsSeconds: 1 })).toEqual({
      batches: 1,
      operations: 1,
      byPlugin: { p: 1 },
    });
    expect(await operations.get(done.operation.id)).toBeUndefined();
    expect(await operations.byIdempotencyKey('k-done')).toBeUndefined();
    expect(await batches.get(finished.batchId)).toBeUndefined();
    for (const batch of [...kept, otherPlugin]) expect(await batches.get(batch.batchId)).toBeDefined();
    expect((await operations.get(waiting.operation.id))?.state).toBe('queued');
    expect((await operations.byIdempotencyKey('k-waiting'))?.id).toBe(waiting.operation.id);
  });
});
