// Rollouts driven by real worker processes over a real Redis and the queue
// fixture plugin (docs/ARCHITECTURE.md "Rollouts"): the selection by --where
// and --advertised with untrusted projects skipped, the two-person approval,
// waves in order within their concurrency, the failure budget pausing a
// rollout and an admin resuming it, cancel, and a worker killed with SIGKILL
// mid-wave without a second run of any project.
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useQueueSuite } from '../support/queue-suite.js';
import { addProjects, inspectAll, runsOf, untilRollout } from '../support/rollouts.js';
import {
  ACTOR,
  PLUGIN_ID,
  kill9,
  pidOfIdentity,
  readLines,
  startWorker,
  waitFor,
  type Spawned,
} from '../support/workers.js';

const suite = useQueueSuite('rollouts');
const ADMIN = 'token:second-admin';

async function textOf(chunks: AsyncIterable<string>): Promise<string> {
  let text = '';
  for await (const chunk of chunks) text += chunk;
  return text;
}

const timesOf = (line: string) => ({
  start: Number(/start=(\d+)/.exec(line)?.[1]),
  end: Number(/end=(\d+)/.exec(line)?.[1]),
});

describe('a rollout', () => {
  it('selects by --where and --advertised, skips untrusted projects, and waits for a second admin', async () => {
    const installation = await suite.install('rollout-select');
    const { runtime } = installation;
    const roots = await addProjects(installation, 6, (index) => ({
      'go.version': ['1.19', '1.20', '1.21', '1.22'][index % 4]!,
    }));
    // p04 (go 1.19) fails its inspection: it advertises nothing.
    await writeFile(join(roots.get('p04')!, 'inspect-error'), '');
    await startWorker(installation);
    await inspectAll(installation);
    // p01 (go 1.20) is untrusted after its inspection: selected, then skipped with the reason.
    await runtime.projects.setTrusted('p01', false, ACTOR);
    await runtime.webhooks.add(
      { url: 'http://127.0.0.1:9/hook', events: ['rollout.awaiting-approval'], secret: 'x'.repeat(32) },
      ACTOR,
    );

    const rollout = await runtime.rollouts.create(
      {
        pluginId: PLUGIN_ID,
        action: 'append',
        input: { append: 'upgraded' },
        selection: { where: ['go.version<1.21'], advertised: true },
      },
      ACTOR,
    );
    // go < 1.21 among the inspected: p00, p01, p05 (p04 has no successful inspection); p01 is untrusted.
    expect(rollout.selection).toEqual(['--where go.version<1.21', '--advertised']);
    expect(rollout.total).toBe(2);
    expect(rollout.skipped).toEqual([{ projectId: 'p01', reason: 'untrusted (project trust allows it)' }]);
    expect(rollout.risk).toBe('low');
    expect(rollout.state).toBe('awaiting-approval');
    const { items: projects } = await runtime.rollouts.projects(rollout.id);
    expect(projects.map((project) => project.projectId)).toEqual(['p00', 'p05']);

    // --advertised alone: every project whose latest successful inspection offered `append`, not p04.
    const advertised = await runtime.rollouts.create(
      { pluginId: PLUGIN_ID, action: 'append', selection: { advertised: true } },
      ACTOR,
    );
    const { items: offered } = await runtime.rollouts.projects(advertised.id);
    expect(offered.map((project) => project.projectId)).toEqual(['p00', 'p02', 'p03', 'p05']);
    expect(advertised.skipped.map((entry) => entry.projectId)).toEqual(['p01']);
    expect((await runtime.rollouts.cancel(advertised.id, ACTOR)).state).toBe('cancelled');

    const delivered = await runtime.webhooks.deliveries();
    expect(delivered.filter((delivery) => delivery.event === 'rollout.awaiting-approval')).toHaveLength(2);

    // The creator may not approve it; nothing has run.
    await expect(runtime.rollouts.approve(rollout.id, ACTOR)).rejects.toThrow(/another admin must approve/);
    expect((await runsOf(roots)).get('p00')).toEqual([]);

    const approved = await runtime.rollouts.approve(rollout.id, ADMIN);
    expect(approved.approvedBy).toBe(ADMIN);
    const finished = await untilRollout(installation, rollout.id, 'the rollout to end', (view) =>
      ['succeeded', 'failed'].includes(view.state),
    );
    expect(finished.state).toBe('succeeded');
    expect(finished.counts).toMatchObject({ succeeded: 2, pending: 0, running: 0, failed: 0 });
    const runs = await runsOf(roots);
    expect([...runs].filter(([, lines]) => lines.length > 0).map(([id]) => id)).toEqual(['p00', 'p05']);
    const audit = await runtime.audit.query({ limit: 50 }, { role: 'admin' });
    expect(audit.items.some((entry) => entry.action === 'rollout.approve' && entry.actor === ADMIN)).toBe(
      true,
    );
  }, 120_000);

  it('starts at once when the action is risk none, runs its waves in order within the concurrency', async () => {
    const installation = await suite.install('rollout-waves');
    const { runtime, packageDir } = installation;
    await writeFile(join(packageDir, 'append-risk'), 'none\n');
    const roots = await addProjects(installation, 7);
    await startWorker(installation, { concurrency: 4 });
    await inspectAll(installation);

    const rollout = await runtime.rollouts.create(
      {
        pluginId: PLUGIN_ID,
        action: 'append',
        input: { append: 'ran', recordTimes: true, sleepMs: 300 },
        selection: { all: true },
        waves: '1,50%,100%',
        concurrency: 2,
      },
      ACTOR,
    );
    expect(rollout.state).toBe('running');
    expect(rollout.waves.map((wave) => wave.size)).toEqual([1, 3, 3]);
    const finished = await untilRollout(installation, rollout.id, 'the rollout to end', (view) =>
      ['succeeded', 'failed'].includes(view.state),
    );
    expect(finished.state).toBe('succeeded');
    expect(finished.waves.every((wave) => wave.state === 'done')).toBe(true);

    const runs = await runsOf(roots);
    for (const lines of runs.values()) expect(lines).toHaveLength(1);
    const times = [...runs.values()].map((lines) => timesOf(lines[0]!));
    const waves = [[0], [1, 2, 3], [4, 5, 6]].map((indexes) => indexes.map((index) => times[index]!));
    // Each wave starts after every project of the one before has ended.
    for (let wave = 1; wave < waves.length; wave++) {
      const previousEnd = Math.max(...waves[wave - 1]!.map((time) => time.end));
      expect(Math.min(...waves[wave]!.map((time) => time.start))).toBeGreaterThanOrEqual(previousEnd);
    }
    // At most two at once within a wave.
    for (const wave of waves)
      for (const time of wave) {
        const overlapping = wave.filter((other) => other.start < time.end && time.start < other.end);
        expect(overlapping.length).toBeLessThanOrEqual(2);
      }
  }, 120_000);

  it('pauses when its failure budget is exceeded; only an admin resumes it, then it goes on', async () => {
    const installation = await suite.install('rollout-budget');
    const { runtime, packageDir } = installation;
    await writeFile(join(packageDir, 'append-risk'), 'none\n');
    const roots = await addProjects(installation, 6);
    for (const id of ['p01', 'p02']) await writeFile(join(roots.get(id)!, 'operate-fail'), '');
    await runtime.webhooks.add(
      {
        url: 'http://127.0.0.1:9/hook',
        events: ['rollout.paused', 'rollout.finished'],
        secret: 'x'.repeat(32),
      },
      ACTOR,
    );
    await startWorker(installation);
    await inspectAll(installation);

    const rollout = await runtime.rollouts.create(
      {
        pluginId: PLUGIN_ID,
        action: 'append',
        input: { append: 'ran' },
        selection: { all: true },
        waves: '100%',
        concurrency: 1,
        maxFailures: '1',
      },
      ACTOR,
    );
    const paused = await untilRollout(
      installation,
      rollout.id,
      'the budget to pause it',
      (view) => view.state === 'paused',
    );
    expect(paused.pausedReason).toMatch(/failure budget is exceeded: 2 failed, at most 1 allowed/);
    expect(paused.counts).toMatchObject({ succeeded: 1, failed: 2, pending: 3, running: 0 });
    // No new operation starts while it is paused.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const ran = [...(await runsOf(roots)).values()].filter((lines) => lines.length > 0).length;
    expect(ran).toBe(3);
    expect((await runtime.rollouts.get(rollout.id)).state).toBe('paused');
    const deliveries = await runtime.webhooks.deliveries();
    expect(deliveries.map((delivery) => delivery.event)).toContain('rollout.paused');

    await expect(runtime.rollouts.resume(rollout.id, ACTOR, { admin: false })).rejects.toThrow(
      /only an admin/,
    );
    await runtime.rollouts.resume(rollout.id, ADMIN, { admin: true });
    const finished = await untilRollout(installation, rollout.id, 'the rollout to end', (view) =>
      ['succeeded', 'failed'].includes(view.state),
    );
    expect(finished.state).toBe('failed');
    expect(finished.counts).toMatchObject({ succeeded: 4, failed: 2, pending: 0, running: 0 });
    for (const lines of (await runsOf(roots)).values()) expect(lines).toHaveLength(1);
    await waitFor('the rollout.finished delivery', async () =>
      (await runtime.webhooks.deliveries()).some((delivery) => delivery.event === 'rollout.finished'),
    );

    // The export lists every project; a retry of the failed ones (fixed meanwhile) runs only those two.
    const csv = await textOf(await runtime.rollouts.export(rollout.id, 'csv'));
    expect(csv.split('\n')[0]).toBe('rolloutId,projectId,wave,state,operationId,errorCode,errorMessage');
    expect(csv.split('\n').filter((line) => line.includes(',failed,'))).toHaveLength(2);
    const jsonl = (await textOf(await runtime.rollouts.export(rollout.id, 'jsonl'))).trim().split('\n');
    expect(jsonl.map((line) => (JSON.parse(line) as { projectId: string }).projectId)).toEqual([
      'p00',
      'p01',
      'p02',
      'p03',
      'p04',
      'p05',
    ]);
    for (const id of ['p01', 'p02']) await rm(join(roots.get(id)!, 'operate-fail'));
    const retry = await runtime.rollouts.retry(rollout.id, ACTOR);
    expect(retry).toMatchObject({ retryOf: rollout.id, total: 2, state: 'running' });
    const retried = await untilRollout(installation, retry.id, 'the retry to end', (view) =>
      ['succeeded', 'failed'].includes(view.state),
    );
    expect(retried.state).toBe('succeeded');
    const runs = await runsOf(roots);
    expect([...runs].map(([id, lines]) => [id, lines.length])).toEqual([
      ['p00', 1],
      ['p01', 2],
      ['p02', 2],
      ['p03', 1],
      ['p04', 1],
      ['p05', 1],
    ]);
    await expect(runtime.rollouts.retry(retry.id, ACTOR)).rejects.toThrow(/no failed project to retry/);
  }, 120_000);

  it('failures that end while a person paused it still trip the budget: only an admin resumes', async () => {
    const installation = await suite.install('rollout-paused-budget');
    const { runtime, packageDir } = installation;
    await writeFile(join(packageDir, 'append-risk'), 'none\n');
    const roots = await addProjects(installation, 6);
    for (const id of ['p00', 'p01']) await writeFile(join(roots.get(id)!, 'operate-fail'), '');
    await startWorker(installation);
    await inspectAll(installation);

    const rollout = await runtime.rollouts.create(
      {
        pluginId: PLUGIN_ID,
        action: 'append',
        input: { append: 'ran', sleepMs: 3_000, recordTimes: true },
        selection: { all: true },
        waves: '100%',
        concurrency: 2,
        maxFailures: '1',
      },
      ACTOR,
    );
    await untilRollout(
      installation,
      rollout.id,
      'two operations running',
      (view) => view.counts.running === 2,
    );
    // An operator pauses while both run; both then fail, past the budget of 1.
    await runtime.rollouts.pause(rollout.id, ACTOR);
    const ended = await untilRollout(
      installation,
      rollout.id,
      'both running operations to end',
      (view) => view.counts.running === 0,
    );
    expect(ended.state).toBe('paused');
    expect(ended.counts).toMatchObject({ failed: 2, pending: 4 });
    expect(ended.pausedReason).toMatch(/failure budget is exceeded: 2 failed, at most 1 allowed/);
    // The person's pause does not let an operator start more past the budget.
    await expect(runtime.rollouts.resume(rollout.id, ACTOR, { admin: false })).rejects.toThrow(
      /only an admin/,
    );
    expect((await runtime.rollouts.get(rollout.id)).counts.pending).toBe(4);
  }, 120_000);

  it('cancelled: queued projects never start, the running operation is cancelled', async () => {
    const installation = await suite.install('rollout-cancel');
    const { runtime, packageDir } = installation;
    await writeFile(join(packageDir, 'append-risk'), 'none\n');
    const roots = await addProjects(installation, 5);
    await startWorker(installation);
    await inspectAll(installation);

    const rollout = await runtime.rollouts.create(
      {
        pluginId: PLUGIN_ID,
        action: 'append',
        input: { append: 'ran', sleepMs: 30_000 },
        selection: { all: true },
        waves: '100%',
        concurrency: 1,
      },
      ACTOR,
    );
    await waitFor('the first project to start', async () => (await runsOf(roots)).get('p00')!.length > 0);
    const cancelled = await runtime.rollouts.cancel(rollout.id, ADMIN);
    expect(cancelled.state).toBe('cancelled');
    expect(cancelled.cancelledBy).toBe(ADMIN);
    const ended = await untilRollout(
      installation,
      rollout.id,
      'its operation to end',
      (view) => view.counts.running === 0,
    );
    expect(ended.counts).toMatchObject({ cancelled: 5, pending: 0, running: 0, succeeded: 0 });
    const { items } = await runtime.rollouts.projects(rollout.id);
    const operation = await runtime.operations.get(items[0]!.operationId!);
    expect(operation.state).toBe('cancelled');
    expect(items.slice(1).every((project) => project.operationId === undefined)).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const ran = [...(await runsOf(roots)).values()].filter((lines) => lines.length > 0).length;
    expect(ran).toBe(1);
  }, 120_000);

  it('cancelled when every project has already started (none pending): its operations are cancelled', async () => {
    const installation = await suite.install('rollout-cancel-all-started');
    const { runtime, packageDir } = installation;
    await writeFile(join(packageDir, 'append-risk'), 'none\n');
    const roots = await addProjects(installation, 2);
    await startWorker(installation);
    await inspectAll(installation);

    const rollout = await runtime.rollouts.create(
      {
        pluginId: PLUGIN_ID,
        action: 'append',
        input: { append: 'ran', sleepMs: 30_000 },
        selection: { all: true },
        waves: '100%',
        concurrency: 2,
      },
      ACTOR,
    );
    await waitFor('both projects to start', async () =>
      [...(await runsOf(roots)).values()].every((lines) => lines.length > 0),
    );
    // Nothing is left pending: the cancel ends no pending project (the count it adds is zero).
    const cancelled = await runtime.rollouts.cancel(rollout.id, ADMIN);
    expect(cancelled.state).toBe('cancelled');
    const ended = await untilRollout(
      installation,
      rollout.id,
      'its operations to end',
      (view) => view.counts.running === 0,
    );
    expect(ended.counts).toMatchObject({ cancelled: 2, pending: 0, running: 0, succeeded: 0 });
  }, 120_000);

  it('survives a worker killed with SIGKILL mid-wave: no project runs twice, the lost one is OUTCOME_UNKNOWN', async () => {
    const installation = await suite.install('rollout-kill');
    const { runtime, packageDir } = installation;
    await writeFile(join(packageDir, 'append-risk'), 'none\n');
    const roots = await addProjects(installation, 10);
    const workers: Spawned[] = [await startWorker(installation), await startWorker(installation)];
    await inspectAll(installation);

    const rollout = await runtime.rollouts.create(
      {
        pluginId: PLUGIN_ID,
        action: 'append',
        input: { append: 'ran', sleepMs: 1_500 },
        selection: { all: true },
        waves: '2,100%',
        concurrency: 4,
        maxFailures: '100%',
      },
      ACTOR,
    );
    // Mid second wave: kill the worker running one of its operations, after project.operate was sent.
    const victimOperation = await waitFor(
      'an operation of the second wave running',
      async () => {
        const { items } = await runtime.rollouts.projects(rollout.id, { state: 'running' });
        for (const project of items.filter((item) => item.wave === 2 && item.operationId)) {
          const operation = await runtime.operations.get(project.operationId!);
          const root = roots.get(project.projectId)!;
          const started = (await readLines(join(root, 'operations.log')).catch(() => [])).length > 0;
          if (operation.worker && started) return operation;
        }
        return undefined;
      },
      60_000,
      20,
    );
    const victim = workers.find((worker) => worker.pid === pidOfIdentity(victimOperation.worker))!;
    await kill9(victim);

    const finished = await untilRollout(
      installation,
      rollout.id,
      'the rollout to end after the kill',
      (view) => ['succeeded', 'failed'].includes(view.state),
      90_000,
    );
    expect(finished.counts.pending + finished.counts.running).toBe(0);
    expect(finished.counts.outcome_unknown).toBeGreaterThanOrEqual(1);
    expect(finished.state).toBe('failed');
    const lost = await runtime.operations.get(victimOperation.id);
    expect(lost.errorCode).toBe('OUTCOME_UNKNOWN');
    // Every project ran once, none twice, the killed ones included.
    const runs = await runsOf(roots);
    for (const [id, lines] of runs) expect(lines.length, id).toBe(1);
    const { items } = await runtime.rollouts.projects(rollout.id, { limit: 100 });
    expect(new Set(items.map((project) => project.operationId)).size).toBe(10);
    const log = await readFile(join(packageDir, 'calls.log'), 'utf8');
    expect(log.split('\n').filter((line) => line.startsWith('project.operate ')).length).toBe(10);
  }, 180_000);

  it('a claim whose operation was never created (its process died) is given one by the sweep, once', async () => {
    const installation = await suite.install('rollout-lost-claim');
    const { runtime } = installation;
    const roots = await addProjects(installation, 4);
    await startWorker(installation);
    await inspectAll(installation);
    // Risk low: it waits for approval, and create() starts nothing.
    const rollout = await runtime.rollouts.create(
      {
        pluginId: PLUGIN_ID,
        action: 'append',
        input: { append: 'ran' },
        selection: { all: true },
        waves: '100%',
        concurrency: 2,
      },
      ACTOR,
    );
    expect(rollout.state).toBe('awaiting-approval');
    // An approving process that changed the state and took its step, then died before creating the
    // claimed projects' operations: the approval's write and the step script alone.
    await runtime.redis.hset(runtime.keys.rollout(rollout.id), 'state', 'running', 'approvedBy', ADMIN);
    const step = await runtime.rollouts.store.step(rollout.id);
    expect(step.claimed).toEqual(['p00', 'p01']);
    expect((await runtime.rollouts.get(rollout.id)).counts).toMatchObject({ running: 2, pending: 2 });

    const finished = await untilRollout(installation, rollout.id, 'the sweep to finish it', (view) =>
      ['succeeded', 'failed'].includes(view.state),
    );
    expect(finished.state).toBe('succeeded');
    for (const lines of (await runsOf(roots)).values()) expect(lines).toHaveLength(1);
    const { items } = await runtime.rollouts.projects(rollout.id);
    expect(new Set(items.map((project) => project.operationId)).size).toBe(4);
  }, 120_000);
});
