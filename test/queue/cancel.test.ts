// Cancellation (docs/ARCHITECTURE.md "Operation lifecycle"): a queued operation
// never starts; a running one has its plugin's process group killed by the
// worker holding it; repeating is harmless; a finished one is left alone;
// every request is audited.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readAudit } from '../../src/core/access/audit.js';
import { liveGroupMembers, isAlive } from '../support/processes.js';
import { useQueueSuite } from '../support/queue-suite.js';
import {
  ACTOR,
  PLUGIN_ID,
  readLines,
  sleep,
  startSleepingOperation,
  startWorker,
  waitFor,
  type Installation,
} from '../support/workers.js';

const suite = useQueueSuite('3-cancel');
const { report } = suite;

async function cancelAudits(inst: Installation, id: string) {
  return (await readAudit(inst.runtime.redis, inst.runtime.keys, 200))
    .filter((entry) => entry.target === id && entry.action === 'operation.cancel')
    .reverse();
}

describe('cancel', () => {
  it('a queued operation: cancelled at once, and a worker started later never runs it', async () => {
    const installation = await suite.install('cancel-queued');
    const { runtime, packageDir } = installation;
    const root = await installation.addProject('queued');
    await installation.addProject('control');
    const { operation } = await runtime.operations.create(
      { pluginId: PLUGIN_ID, projectId: 'queued', action: 'append', input: { append: 'never' } },
      ACTOR,
    );
    const cancelled = await runtime.operations.cancel(operation.id, ACTOR);
    expect(cancelled.state).toBe('cancelled');

    await startWorker(installation);
    // A control operation submitted after the cancel: once it ran, the worker has been through the queue.
    const { operation: control } = await runtime.operations.create(
      { pluginId: PLUGIN_ID, projectId: 'control', action: 'append', input: { append: 'control' } },
      ACTOR,
    );
    const controlFinal = await runtime.operations.wait(control.id, {
      signal: AbortSignal.timeout(20_000),
    });
    await sleep(500);
    const after = await runtime.operations.get(operation.id);
    const lines = await readLines(join(root, 'operations.log'));
    const operateCalls = (await readLines(join(packageDir, 'calls.log'))).filter((line) =>
      line.startsWith('project.operate queued '),
    );
    report.add(
      'cancel a queued operation (no worker running), then start a worker',
      'cancelled at once; never runs: project file stays empty',
      `state ${cancelled.state} at once, ${after.state} after the worker ran a later control operation ` +
        `(${controlFinal.state}); file entries ${lines.length}; plugin operate calls for it ${operateCalls.length}`,
    );
    expect(controlFinal.state).toBe('succeeded');
    expect(after.state).toBe('cancelled');
    expect(lines).toEqual([]);
    expect(operateCalls).toEqual([]);
  });

  it('a running operation: cancelled, and the plugin process group (with a grandchild) is gone within 2 s', async () => {
    const installation = await suite.install('cancel-running');
    const { runtime } = installation;
    const root = await installation.addProject('running');
    await startWorker(installation);
    const { operation, pid, grandchild } = await startSleepingOperation(installation, 'running', root);
    expect(await isAlive(pid)).toBe(true);
    expect(await isAlive(grandchild)).toBe(true);

    const started = performance.now();
    const first = await runtime.operations.cancel(operation.id, ACTOR);
    const second = await runtime.operations.cancel(operation.id, ACTOR);
    const gone = await waitFor(
      'the process group to be gone',
      async () =>
        (await liveGroupMembers(pid)).length === 0 && !(await isAlive(grandchild)) && !(await isAlive(pid))
          ? performance.now() - started
          : undefined,
      5_000,
      10,
    );
    const final = await runtime.operations.wait(operation.id, {
      signal: AbortSignal.timeout(5_000),
      pollMs: 20,
    });
    const stateMs = performance.now() - started;
    const third = await runtime.operations.cancel(operation.id, ACTOR);
    const audits = await cancelAudits(installation, operation.id);
    const outcomes = audits.map((entry) => entry.detail.outcome);
    report.add(
      'cancel a running operation twice (plugin sleeping, with a grandchild in its group), then once more after it ended',
      'cancelled; process group gone within 2 s; repeats harmless; every request audited',
      `state ${final.state} (${final.errorCode}) after ${(stateMs / 1000).toFixed(2)} s; group (leader + grandchild) ` +
        `gone after ${(gone / 1000).toFixed(2)} s; states returned ${first.state}/${second.state}/${third.state}; ` +
        `audited ${audits.length}× (${outcomes.join(', ')})`,
    );
    expect(final.state).toBe('cancelled');
    expect(gone).toBeLessThan(2_000);
    expect(third.state).toBe('cancelled');
    expect(audits).toHaveLength(3);
    expect(outcomes[2]).toBe('terminal');
  });

  it('twice on a queued operation: the second is harmless, state stays cancelled, both audited', async () => {
    const installation = await suite.install('cancel-twice');
    const { runtime } = installation;
    await installation.addProject('twice');
    const { operation } = await runtime.operations.create(
      { pluginId: PLUGIN_ID, projectId: 'twice', action: 'append', input: { append: 'never' } },
      ACTOR,
    );
    const first = await runtime.operations.cancel(operation.id, ACTOR);
    const second = await runtime.operations.cancel(operation.id, ACTOR);
    const audits = await cancelAudits(installation, operation.id);
    report.add(
      'cancel the same queued operation twice',
      'second harmless; state stays cancelled; both audited',
      `states ${first.state} then ${second.state}; audited ${audits.length}× ` +
        `(${audits.map((entry) => `${entry.detail.outcome} from ${entry.detail.stateBefore}`).join(', ')})`,
    );
    expect(first.state).toBe('cancelled');
    expect(second.state).toBe('cancelled');
    expect(second.finishedAt).toBe(first.finishedAt);
    expect(audits.map((entry) => entry.detail)).toEqual([
      { outcome: 'cancelled', stateBefore: 'queued' },
      { outcome: 'terminal', stateBefore: 'cancelled' },
    ]);
  });

  it('a finished operation: left as it is (still succeeded), the request audited', async () => {
    const installation = await suite.install('cancel-finished');
    const { runtime } = installation;
    await installation.addProject('finished');
    await startWorker(installation);
    const { operation } = await runtime.operations.create(
      { pluginId: PLUGIN_ID, projectId: 'finished', action: 'append', input: { append: 'done' } },
      ACTOR,
    );
    const done = await runtime.operations.wait(operation.id, { signal: AbortSignal.timeout(20_000) });
    expect(done.state).toBe('succeeded');
    const after = await runtime.operations.cancel(operation.id, ACTOR);
    const audits = await cancelAudits(installation, operation.id);
    report.add(
      'cancel a finished (succeeded) operation',
      'state unchanged',
      `state ${after.state}, finishedAt ${after.finishedAt === done.finishedAt ? 'unchanged' : 'changed'}, ` +
        `result ${JSON.stringify(after.result) === JSON.stringify(done.result) ? 'unchanged' : 'changed'}; ` +
        `audited ${audits.length}× (${audits.map((entry) => entry.detail.outcome).join(', ')})`,
    );
    expect(after).toEqual(done);
    expect(audits.map((entry) => entry.detail.outcome)).toEqual(['terminal']);
  });
});
