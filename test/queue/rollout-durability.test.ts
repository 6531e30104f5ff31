// A rollout survives what its processes and its Redis go through
// (docs/ARCHITECTURE.md "Rollouts", what survives what), with real workers, a
// real api process, the file's own Redis (AOF, appendfsync always) and a real
// webhook receiver: Redis killed with -9 and restarted mid-wave, the api
// killed with -9 and restarted while one rollout awaits approval and another
// runs, both workers killed with -9 mid-wave under a budget of 0 failures.
// After each, the rollout goes on where it was, no project's action runs
// twice, and rollout.awaiting-approval, rollout.paused and rollout.finished
// arrive once each.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { RolloutView } from '../../src/core/work/rollouts/index.js';
import { call, startApi, stopAll } from '../api/support.js';
import { useQueueSuite } from '../support/queue-suite.js';
import { addProjects, inspectAll, isOver, runsOf, untilRollout } from '../support/rollouts.js';
import { closeReceivers, startReceiver, type Receiver } from '../support/webhook-receiver.js';
import {
  ACTOR,
  PLUGIN_ID,
  kill9,
  readLines,
  sleep,
  startWorker,
  waitFor,
  type Installation,
} from '../support/workers.js';

const suite = useQueueSuite('rollout-durability', { appendfsync: 'always' });
const ADMIN = 'token:second-admin';
const EVENTS = ['rollout.awaiting-approval', 'rollout.paused', 'rollout.finished'] as const;

afterEach(async () => {
  await stopAll();
  await closeReceivers();
});

/** A receiver of the three rollout events. */
async function hookRolloutEvents(installation: Installation): Promise<Receiver> {
  const receiver = await startReceiver();
  await installation.runtime.webhooks.add(
    { url: receiver.url, events: [...EVENTS], secret: 'x'.repeat(32) },
    ACTOR,
  );
  return receiver;
}

/** What the receiver got about one rollout: `event` or `event: reason` (pauses), in order. */
function received(receiver: Receiver, rolloutId: string): string[] {
  return receiver.received
    .filter((entry) => (entry.body.data.rollout as RolloutView).id === rolloutId)
    .map((entry) => {
      const rollout = entry.body.data.rollout as RolloutView;
      return entry.event === 'rollout.paused' ? `${entry.event}: ${rollout.pausedReason}` : entry.event;
    });
}

/** Every delivery id came once: no event was sent twice under two ids, nor one id twice. */
function expectEachDeliveredOnce(receiver: Receiver): void {
  const ids = receiver.received.map((entry) => entry.delivery);
  expect(new Set(ids).size).toBe(ids.length);
}

/** A running operation of `wave` whose plugin has already started the project's action. */
function untilStartedInWave(
  installation: Installation,
  rolloutId: string,
  roots: Map<string, string>,
  wave: number,
) {
  const { runtime } = installation;
  return waitFor(
    `an operation of wave ${wave} running`,
    async () => {
      const { items } = await runtime.rollouts.projects(rolloutId, { state: 'running' });
      for (const project of items.filter((item) => item.wave === wave && item.operationId)) {
        const operation = await runtime.operations.get(project.operationId!);
        const started = (await readLines(join(roots.get(project.projectId)!, 'operations.log'))).length > 0;
        if (operation.worker && started) return { projectId: project.projectId, operation };
      }
      return undefined;
    },
    60_000,
    20,
  );
}

async function expectEachRanOnce(roots: Map<string, string>): Promise<void> {
  for (const [id, lines] of await runsOf(roots)) expect(lines.length, id).toBe(1);
}

const sum = (counts: RolloutView['counts']) =>
  Object.values(counts).reduce((total, count) => total + count, 0);

describe('a rollout across restarts', () => {
  it('Redis killed with -9 mid-wave and restarted (AOF): it goes on, each project ran once', async () => {
    const installation = await suite.install('rollout-redis-restart');
    const { runtime } = installation;
    const roots = await addProjects(installation, 8);
    const receiver = await hookRolloutEvents(installation);
    // Job locks longer than the outage (as the default 30 s is): the calls under way go on. With a
    // lock shorter than the outage the worker stops a call: OUTCOME_UNKNOWN once sent, never twice.
    const flags = { lockDurationMs: 15_000 };
    await Promise.all([startWorker(installation, flags), startWorker(installation, flags)]);
    await inspectAll(installation);

    const rollout = await runtime.rollouts.create(
      {
        pluginId: PLUGIN_ID,
        action: 'append',
        input: { append: 'ran', sleepMs: 1_000 },
        selection: { all: true },
        waves: '2,5,100%',
        concurrency: 2,
        maxFailures: '100%',
      },
      ACTOR,
    );
    expect(rollout.state).toBe('awaiting-approval');
    await runtime.rollouts.approve(rollout.id, ADMIN);
    await untilStartedInWave(installation, rollout.id, roots, 2);
    await suite.redis.kill();
    await sleep(1_500);
    await suite.redis.restart();

    const finished = await untilRollout(installation, rollout.id, 'the rollout to end', isOver, 90_000);
    suite.report.add(
      'kill -9 Redis (AOF always) mid wave 2 of a 3-wave rollout of 8 projects, restart it 1.5 s later',
      'the rollout ends; every project ran once; counts add up to 8',
      `${finished.state}, counts ${JSON.stringify(finished.counts)}`,
    );
    expect(finished.counts).toMatchObject({ pending: 0, running: 0, cancelled: 0, failed: 0 });
    expect(sum(finished.counts)).toBe(8);
    expect(finished.waves.every((wave) => wave.state === 'done')).toBe(true);
    await expectEachRanOnce(roots);
    const { items } = await runtime.rollouts.projects(rollout.id);
    expect(new Set(items.map((project) => project.operationId)).size).toBe(8);

    await waitFor('rollout.finished delivered', async () =>
      received(receiver, rollout.id).includes('rollout.finished'),
    );
    await sleep(1_000); // nothing more arrives
    expect(received(receiver, rollout.id)).toEqual(['rollout.awaiting-approval', 'rollout.finished']);
    expectEachDeliveredOnce(receiver);
  }, 150_000);

  it('the api killed with -9 and restarted: a rollout awaiting approval and a running one are intact', async () => {
    const installation = await suite.install('rollout-api-restart');
    const { runtime } = installation;
    const roots = await addProjects(installation, 8);
    const receiver = await hookRolloutEvents(installation);
    await startWorker(installation);
    await inspectAll(installation);
    let api = await startApi(installation);

    const plan = { pluginId: PLUGIN_ID, action: 'append', input: { append: 'ran', sleepMs: 1_000 } };
    const waiting = await runtime.rollouts.create(
      { ...plan, selection: { projects: ['p00', 'p01', 'p02'] } },
      ACTOR,
    );
    const running = await runtime.rollouts.create(
      {
        ...plan,
        selection: { projects: ['p03', 'p04', 'p05', 'p06', 'p07'] },
        waves: '1,100%',
        concurrency: 2,
      },
      ACTOR,
    );
    const approved = await call<RolloutView>(api, 'POST', `/api/v1/rollouts/${running.id}/approve`, {
      token: api.adminToken,
      body: {},
    });
    expect(approved.status, approved.text).toBe(200);
    await untilStartedInWave(installation, running.id, roots, 2);
    await kill9(api.proc);
    api = await startApi(installation);

    const waitingAfter = await call<RolloutView>(api, 'GET', `/api/v1/rollouts/${waiting.id}`, {
      token: api.adminToken,
    });
    expect(waitingAfter.status, waitingAfter.text).toBe(200);
    expect(waitingAfter.json).toMatchObject({
      state: 'awaiting-approval',
      counts: { pending: 3, running: 0 },
    });
    const runningAfter = await call<RolloutView>(api, 'GET', `/api/v1/rollouts/${running.id}`, {
      token: api.adminToken,
    });
    expect(['running', 'succeeded']).toContain(runningAfter.json.state);
    expect(runningAfter.json.approvedBy).toBe(approved.json.approvedBy);

    const approvedAfter = await call<RolloutView>(api, 'POST', `/api/v1/rollouts/${waiting.id}/approve`, {
      token: api.adminToken,
      body: {},
    });
    expect(approvedAfter.status, approvedAfter.text).toBe(200);
    for (const rollout of [waiting, running]) {
      const finished = await untilRollout(installation, rollout.id, `${rollout.id} to end`, isOver);
      expect(finished.state).toBe('succeeded');
    }
    suite.report.add(
      'kill -9 the api while one rollout awaits approval and another runs its second wave; start it again',
      'both intact; approval through the restarted api starts the first; both succeed; each project ran once',
      `both succeeded`,
    );
    await expectEachRanOnce(roots);

    await waitFor('both rollout.finished delivered', async () =>
      [waiting, running].every((rollout) => received(receiver, rollout.id).includes('rollout.finished')),
    );
    await sleep(1_000); // nothing more arrives
    for (const rollout of [waiting, running])
      expect(received(receiver, rollout.id)).toEqual(['rollout.awaiting-approval', 'rollout.finished']);
    expectEachDeliveredOnce(receiver);
  }, 150_000);

  it('both workers killed with -9 mid-wave, budget 0: OUTCOME_UNKNOWN pauses it; resumed, it goes on', async () => {
    const installation = await suite.install('rollout-workers-killed');
    const { runtime, packageDir } = installation;
    await writeFile(join(packageDir, 'append-risk'), 'none\n');
    const roots = await addProjects(installation, 6);
    const receiver = await hookRolloutEvents(installation);
    const workers = await Promise.all([startWorker(installation), startWorker(installation)]);
    await inspectAll(installation);

    const rollout = await runtime.rollouts.create(
      {
        pluginId: PLUGIN_ID,
        action: 'append',
        input: { append: 'ran', sleepMs: 2_000 },
        selection: { all: true },
        waves: '2,100%',
        concurrency: 1,
        maxFailures: '0',
        pauseBetween: true,
      },
      ACTOR,
    );
    expect(rollout.state).toBe('running');
    const { projectId, operation } = await untilStartedInWave(installation, rollout.id, roots, 1);
    expect(projectId).toBe('p00');
    await Promise.all(workers.map((worker) => kill9(worker)));
    await startWorker(installation);

    const paused = await untilRollout(
      installation,
      rollout.id,
      'the budget to pause it',
      (view) => view.state === 'paused',
    );
    expect(paused.pausedReason).toMatch(/failure budget is exceeded: 1 failed, at most 0 allowed/);
    expect(paused.counts).toMatchObject({ outcome_unknown: 1, running: 0, pending: 5 });
    expect((await runtime.operations.get(operation.id)).errorCode).toBe('OUTCOME_UNKNOWN');
    const { items: lost } = await runtime.rollouts.projects(rollout.id, { state: 'outcome_unknown' });
    expect(lost.map((project) => [project.projectId, project.errorCode])).toEqual([
      ['p00', 'OUTCOME_UNKNOWN'],
    ]);

    await runtime.rollouts.resume(rollout.id, ADMIN, { admin: true });
    const betweenWaves = await untilRollout(
      installation,
      rollout.id,
      'the pause after wave 1',
      (view) => view.state === 'paused' && view.counts.running === 0 && view.counts.pending === 4,
    );
    expect(betweenWaves.pausedReason).toMatch(/wave 1 of 2 ended \(--pause-between\)/);
    await runtime.rollouts.resume(rollout.id, ACTOR, { admin: false });
    const finished = await untilRollout(installation, rollout.id, 'the rollout to end', isOver);
    suite.report.add(
      'kill -9 both workers while the first project of a 2-wave rollout (budget 0, --pause-between) runs',
      'OUTCOME_UNKNOWN, counted as a failure: paused by the budget; admin resume goes on; each project ran once',
      `paused: ${paused.pausedReason}; finished ${finished.state}, counts ${JSON.stringify(finished.counts)}`,
    );
    expect(finished.state).toBe('failed');
    expect(finished.counts).toMatchObject({
      succeeded: 5,
      outcome_unknown: 1,
      failed: 0,
      pending: 0,
      running: 0,
    });
    await expectEachRanOnce(roots);

    await waitFor('rollout.finished delivered', async () =>
      received(receiver, rollout.id).includes('rollout.finished'),
    );
    await sleep(1_000); // nothing more arrives
    // Deliveries are queued jobs: they may arrive in any order, each pause with its own reason.
    const events = received(receiver, rollout.id).sort();
    expect(events).toHaveLength(3);
    expect(events[0]).toBe('rollout.finished');
    expect(events[1]).toMatch(/^rollout.paused: the failure budget is exceeded/);
    expect(events[2]).toMatch(/^rollout.paused: wave 1 of 2 ended/);
    expectEachDeliveredOnce(receiver);
  }, 150_000);
  it('an end whose process died before publishing its webhook: the sweep publishes it, once', async () => {
    const installation = await suite.install('rollout-unannounced');
    const { runtime, packageDir } = installation;
    await writeFile(join(packageDir, 'append-risk'), 'none\n');
    await addProjects(installation, 2);
    const receiver = await hookRolloutEvents(installation);
    await kill9(
      await startWorker(installation).then(async (inspector) => (await inspectAll(installation), inspector)),
    );
    // No worker now: both claimed projects' operations wait in the queue; they are cancelled.
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
    const { items } = await runtime.rollouts.projects(rollout.id);
    for (const project of items) await runtime.operations.cancel(project.operationId!, ADMIN);
    // The process that saw them end took its steps (the script alone), then died before publishing.
    await runtime.rollouts.store.step(rollout.id, { projectId: 'p00', end: 'cancelled' });
    const last = await runtime.rollouts.store.step(rollout.id, { projectId: 'p01', end: 'cancelled' });
    expect(last.events).toEqual(['finished']);
    expect(receiver.received).toEqual([]);

    await startWorker(installation);
    await waitFor('the sweep to publish rollout.finished', async () =>
      received(receiver, rollout.id).includes('rollout.finished'),
    );
    await sleep(6_000); // a sweep later: not again
    expect(received(receiver, rollout.id)).toEqual(['rollout.finished']);
    expectEachDeliveredOnce(receiver);
    expect(await runtime.rollouts.store.active()).not.toContain(rollout.id);
  }, 90_000);
});
