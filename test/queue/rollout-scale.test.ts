// Rollouts at fleet scale, over a real Redis (docs/ARCHITECTURE.md
// "Rollouts"): the sweep reads only the projects in flight (the set the Lua
// scripts keep), never runs twice at once in one process, stays within its
// budget a run and finds the projects in flight again when the set is lost;
// cancel and the claims read the project list once (no LINDEX a project);
// the selection reads the latest inspections in a few round trips. No worker
// runs here: the numbers read from Redis are this process's alone.
import { describe, expect, it } from 'vitest';
import type { Redis } from 'ioredis';
import { useQueueSuite } from '../support/queue-suite.js';
import { ACTOR, PLUGIN_ID, type Installation } from '../support/workers.js';

const suite = useQueueSuite('rollout-scale');
const ADMIN = 'token:second-admin';

/** A rollout written straight into the store: `count` made-up project ids, one wave, running. */
async function bigRollout(
  installation: Installation,
  count: number,
  plan: { concurrency?: number; maxFailures?: number } = {},
): Promise<string> {
  const ids = Array.from({ length: count }, (_, index) => `x${String(index).padStart(6, '0')}`);
  const record = await installation.runtime.rollouts.store.create(
    {
      name: 'scale',
      pluginId: PLUGIN_ID,
      action: 'append',
      input: {},
      state: 'running',
      risk: 'none',
      createdBy: ACTOR,
      total: count,
      skipped: [],
      waveEnds: [count],
      concurrency: plan.concurrency ?? 4,
      maxFailures: plan.maxFailures ?? 0,
      pauseBetween: false,
      selection: ['--all'],
    },
    ids,
  );
  return record.id;
}

async function bytesSent(redis: Redis): Promise<number> {
  const info = await redis.info('stats');
  return Number(/total_net_output_bytes:(\d+)/.exec(info)?.[1]);
}

async function calls(redis: Redis, command: string): Promise<number> {
  const info = await redis.info('commandstats');
  return Number(new RegExp(`cmdstat_${command}:calls=(\\d+)`).exec(info)?.[1] ?? 0);
}

describe('a rollout at scale', () => {
  it('the sweep reads only the projects in flight, not the 20,000 pending', async () => {
    const installation = await suite.install('rollout-sweep-reads');
    const { runtime } = installation;
    const id = await bigRollout(installation, 20_000);
    // Four claimed (their operations never created: as if their process died), then a person paused it.
    const step = await runtime.rollouts.store.step(id);
    expect(step.claimed).toHaveLength(4);
    await runtime.rollouts.store.control(id, ['running'], 'paused', { pausedKind: 'person' });

    const before = await bytesSent(runtime.redis);
    const report = await runtime.rollouts.sweep();
    const sent = (await bytesSent(runtime.redis)) - before;
    expect(report).toEqual({ skipped: false, rollouts: 1, projects: 4 });
    // Reading every project's id and state would be well over 500 kB.
    expect(sent).toBeLessThan(100_000);
    // The four were looked at: their operations are refused (no such project), so they failed.
    const view = await runtime.rollouts.get(id);
    expect(view.counts).toMatchObject({ failed: 4, running: 0, pending: 19_996 });
    expect(await runtime.redis.scard(runtime.keys.rolloutInFlight(id))).toBe(0);
  }, 120_000);

  it('one sweep at a time per process, within its budget, and the in-flight set found again when lost', async () => {
    const installation = await suite.install('rollout-sweep-guard');
    const { runtime } = installation;
    for (const name of ['a', 'b', 'c']) await installation.addProject(name);
    const ids: string[] = [];
    for (const name of ['a', 'b', 'c']) {
      const rollout = await runtime.rollouts.create(
        { pluginId: PLUGIN_ID, action: 'append', selection: { projects: [name] } },
        ACTOR,
      );
      // No worker: its operation stays queued, in flight.
      await runtime.rollouts.approve(rollout.id, ADMIN);
      ids.push(rollout.id);
    }

    const [first, second] = await Promise.all([runtime.rollouts.sweep(), runtime.rollouts.sweep()]);
    expect([first.skipped, second.skipped].sort()).toEqual([false, true]);
    expect(first.skipped ? second : first).toMatchObject({ rollouts: 3, projects: 3 });

    // A budget of 2: one rollout and its one project a run.
    for (let run = 0; run < 3; run++)
      expect(await runtime.rollouts.sweep({ budget: 2 })).toEqual({
        skipped: false,
        rollouts: 1,
        projects: 1,
      });

    // The set lost (a rollout written before it was kept): found again in the states hash, once.
    await runtime.redis.del(runtime.keys.rolloutInFlight(ids[0]!));
    expect((await runtime.rollouts.sweep()).projects).toBe(3);
    expect(await runtime.redis.smembers(runtime.keys.rolloutInFlight(ids[0]!))).toEqual(['a']);
    // And a cancel still cancels the operation it holds.
    await runtime.redis.del(runtime.keys.rolloutInFlight(ids[0]!));
    const cancelled = await runtime.rollouts.cancel(ids[0]!, ACTOR);
    expect(cancelled.counts).toMatchObject({ cancelled: 1, running: 0 });
  }, 120_000);

  it('cancel and the claims read the project list once, not a LINDEX a project', async () => {
    const installation = await suite.install('rollout-cancel-linear');
    const { runtime } = installation;
    const id = await bigRollout(installation, 20_000, { concurrency: 100, maxFailures: 20_000 });
    await runtime.rollouts.store.control(id, ['running'], 'paused', { pausedKind: 'person' });
    await runtime.rollouts.store.control(id, ['paused'], 'running', { pausedKind: '-' });
    const lindexBefore = await calls(runtime.redis, 'lindex');
    const step = await runtime.rollouts.store.step(id);
    expect(step.claimed).toHaveLength(100);
    const started = Date.now();
    const { outcome } = await runtime.rollouts.store.control(id, ['running'], 'cancelled', {});
    const cancelMs = Date.now() - started;
    expect(outcome).toBe('ok');
    expect((await calls(runtime.redis, 'lindex')) - lindexBefore).toBe(0);
    const view = await runtime.rollouts.get(id);
    expect(view.counts).toMatchObject({ cancelled: 19_900, pending: 0, running: 100 });
    suite.report.note(`cancel of a rollout with 19,900 projects pending: ${cancelMs} ms`);
  }, 120_000);

  it('the selection reads the latest inspections in a few round trips, not a few a project', async () => {
    const installation = await suite.install('rollout-selection-reads');
    const { runtime } = installation;
    for (let index = 0; index < 60; index++)
      await installation.addProject(`s${String(index).padStart(2, '0')}`);
    const hgetBefore = await calls(runtime.redis, 'hget');
    const rollout = await runtime.rollouts.create(
      { pluginId: PLUGIN_ID, action: 'append', selection: { all: true } },
      ACTOR,
    );
    const hgets = (await calls(runtime.redis, 'hget')) - hgetBefore;
    expect(rollout.total).toBe(60);
    // Before: two HGETs a project (its latest inspection, its fleet entry) and a project lookup.
    expect(hgets).toBeLessThan(30);
    await runtime.rollouts.cancel(rollout.id, ACTOR);
  }, 120_000);
});
