// The fair queue of inspections (docs/adr/0010-fair-share-inspections.md)
// with real workers, plugin processes and Redis: a small batch behind a large
// one is served at once, two requesters alternate (and 3:1 with a team of
// weight 3), `high` goes before `normal`, a cancelled batch leaves the queue
// mid-turn, slices held by a dead worker leave the buffer count (the live
// workers stay fed), and a worker killed with -9 or a Redis restart (AOF) loses no
// project: every project of every batch ends with one result, no batch starves.
// Order is read from the fixture's calls.log (one line per call, in call
// order), never from wall-clock thresholds.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { setTeamWeight, TokenStore } from '../../src/core/access/index.js';
import { checkPriority } from '../../src/core/work/batches/batch-service.js';
import type { BatchView } from '../../src/core/work/batches/batch-store.js';
import { useQueueSuite } from '../support/queue-suite.js';
import {
  ACTOR,
  PLUGIN_ID,
  kill9,
  readLines,
  sleep,
  startWorker,
  untilBatchFinished,
  waitFor,
  type Installation,
  type Spawned,
} from '../support/workers.js';

const suite = useQueueSuite('fair-share', { appendfsync: 'everysec' });
const { report } = suite;

/** Projects `<prefix>000…` under the installation, trusted; their ids. */
async function projects(installation: Installation, prefix: string, count: number): Promise<string[]> {
  const ids = Array.from({ length: count }, (_, index) => `${prefix}${String(index).padStart(3, '0')}`);
  await Promise.all(ids.map((id) => mkdir(join(installation.projectsDir, id))));
  await installation.runtime.projects.scan(installation.projectsDir, { trust: true }, ACTOR);
  return ids;
}

/** The inspected project ids, in call order. */
async function inspected(installation: Installation): Promise<string[]> {
  return (await readLines(join(installation.packageDir, 'calls.log')))
    .filter((line) => line.startsWith('project.inspect '))
    .map((line) => line.split(' ')[1]!);
}

async function finished(installation: Installation, batch: BatchView, timeoutMs = 120_000) {
  return untilBatchFinished(installation.runtime, batch.batchId, { timeoutMs, intervalMs: 100 });
}

/** Each project of the batch has exactly one result and the batch succeeded. */
function expectWhole(view: BatchView, ids: string[]): void {
  expect(view.state).toBe('succeeded');
  const results = view.results!.map((result) => result.projectId).sort();
  expect(results).toEqual([...ids].sort());
}

/** How many calls of each prefix in `calls` from index `from`, `length` calls. */
function counts(calls: string[], from: number, length: number, prefixes: [string, string]): [number, number] {
  const window = calls.slice(from, from + length);
  const [one, two] = prefixes.map((prefix) => window.filter((id) => id.startsWith(prefix)).length);
  return [one!, two!];
}

describe('the fair queue of inspections', () => {
  it('a small batch queued behind a large one is served at once, and both end whole', async () => {
    const installation = await suite.install('fair-small');
    const large = await projects(installation, 'l', 240);
    const small = await projects(installation, 's', 5);
    await writeFile(join(installation.packageDir, 'inspect-sleep-ms'), '100\n');
    await startWorker(installation, { concurrency: 2 });
    const { batches } = installation.runtime;
    const big = await batches.create(PLUGIN_ID, large, ACTOR);
    await waitFor('20 calls of the large batch', async () => (await inspected(installation)).length >= 20);
    const before = (await inspected(installation)).length;
    const little = await batches.create(PLUGIN_ID, small, 'someone-else');
    const littleDone = await finished(installation, little);
    const calls = await inspected(installation);
    const lastSmall = Math.max(...small.map((id) => calls.indexOf(id)));
    // FIFO would put the small batch's calls after the large batch's 220 remaining ones.
    const between = lastSmall + 1 - before;
    expect(between).toBeLessThanOrEqual(2 * small.length + 4);
    expectWhole(littleDone, small);
    expectWhole(await finished(installation, big), large);
    expect((await inspected(installation)).length).toBe(large.length + small.length);
    report.add(
      'a 5-project batch created while a 240-project batch runs (1 worker × 2, 100 ms calls)',
      'the small batch ends within about twice its own calls; both batches whole',
      `its 5 calls ended within ${between} calls of its creation (FIFO: ~225)`,
    );
  }, 180_000);

  it('a small batch is served at once in every busy period, not behind what its requester ran before', async () => {
    const installation = await suite.install('fair-epochs');
    const large = await projects(installation, 'e', 100);
    const small = await projects(installation, 't', 5);
    const { batches, redis, keys } = installation.runtime;
    const { fair } = batches;
    // One simulated worker slot (the buffer is two slices): each step ends the oldest slice out and refills.
    await fair.heartbeat('sim', 1);
    const out = async () => redis.hkeys(keys.fairSlices);
    const step = async (): Promise<string[]> => {
      const before = await out();
      const oldest = before[0];
      if (oldest === undefined) return [];
      await fair.sliceEnded(oldest.slice(0, oldest.lastIndexOf('.')), oldest);
      await fair.heartbeat('sim', 1);
      await fair.fill();
      return (await out()).filter((id) => !before.includes(id));
    };
    /** Large alone for `alone` steps, then small; how many large slices went out until small's last. */
    const period = async (alone: number): Promise<number> => {
      const big = await batches.create(PLUGIN_ID, large, 'big-user');
      for (let index = 0; index < alone; index += 1) await step();
      const little = await batches.create(PLUGIN_ID, small, 'small-user');
      let bigPicks = 0;
      // Its first slice goes out at its creation: the large batch's queued slices (no worker took
      // them) were given back to the front of their batch, so the full buffer had room at once.
      const atCreate = (await out()).filter((id) => id.startsWith(little.batchId)).length;
      expect(atCreate).toBeGreaterThan(0);
      let smallLeft = small.length - atCreate;
      while (smallLeft > 0) {
        const picked = await step();
        expect(picked.length).toBeGreaterThan(0);
        smallLeft -= picked.filter((id) => id.startsWith(little.batchId)).length;
        bigPicks += picked.filter((id) => id.startsWith(big.batchId)).length;
      }
      while ((await out()).length > 0) await step();
      // Everything given back was handed out again: both batches left the fair queue.
      expect(await redis.hlen(keys.fairBatches)).toBe(0);
      return bigPicks;
    };
    // A late small batch in the first period (the large unit's time is high by then), an early one in the second.
    const first = await period(20);
    const second = await period(2);
    expect(first).toBeLessThanOrEqual(small.length + 2);
    expect(second).toBeLessThanOrEqual(small.length + 2);
    report.add(
      'two busy periods of a 100-project batch; a 5-project batch of another requester comes late in the first, early in the second',
      'in each, about one large slice per small one before the small batch is out',
      `large slices before the small batch's last: ${first}, then ${second}`,
    );
  });

  it('two requesters alternate; a team of weight 3 gets three calls to one', async () => {
    const installation = await suite.install('fair-requesters');
    const a = await projects(installation, 'a', 60);
    const b = await projects(installation, 'b', 60);
    const c = await projects(installation, 'c', 90);
    const d = await projects(installation, 'd', 90);
    await writeFile(join(installation.packageDir, 'inspect-sleep-ms'), '30\n');
    const { runtime } = installation;
    const tokens = new TokenStore(runtime.redis, runtime.keys);
    await tokens.create('carol', 'operator', ACTOR, { team: 'builds' });
    await setTeamWeight(runtime.redis, runtime.keys, 'builds', 3, ACTOR);
    await startWorker(installation, { concurrency: 2 });

    const alice = await runtime.batches.create(PLUGIN_ID, a, 'alice');
    const bob = await runtime.batches.create(PLUGIN_ID, b, 'bob');
    const views = await Promise.all([finished(installation, alice), finished(installation, bob)]);
    expectWhole(views[0], a);
    expectWhole(views[1], b);
    let calls = await inspected(installation);
    // From bob's first call on, 50 calls: about 25 each.
    const [ofAlice, ofBob] = counts(
      calls,
      calls.findIndex((id) => id.startsWith('b')),
      50,
      ['a', 'b'],
    );
    expect(ofAlice / ofBob).toBeGreaterThanOrEqual(0.8);
    expect(ofAlice / ofBob).toBeLessThanOrEqual(1.25);

    const offset = calls.length;
    const team = await runtime.batches.create(PLUGIN_ID, c, 'carol');
    const single = await runtime.batches.create(PLUGIN_ID, d, 'dave');
    const weighted = await Promise.all([finished(installation, team), finished(installation, single)]);
    expectWhole(weighted[0], c);
    expectWhole(weighted[1], d);
    calls = (await inspected(installation)).slice(offset);
    const [ofCarol, ofDave] = counts(
      calls,
      calls.findIndex((id) => id.startsWith('d')),
      60,
      ['c', 'd'],
    );
    expect(ofCarol / ofDave).toBeGreaterThanOrEqual(2.2);
    expect(ofCarol / ofDave).toBeLessThanOrEqual(4);
    report.add(
      'two requesters with a 60-project batch each; then team builds (weight 3) against a requester alone (90 each)',
      'calls 1:1 (0.8–1.25), then about 3:1',
      `alice ${ofAlice} : bob ${ofBob} of 50 calls; carol (builds) ${ofCarol} : dave ${ofDave} of 60`,
    );
  }, 240_000);

  it('high goes before normal; only an admin (or the local user) may ask for high', async () => {
    expect(() => checkPriority('high', 'operator')).toThrow(/admin/);
    expect(checkPriority('high', 'admin')).toBe('high');
    expect(checkPriority('high', undefined)).toBe('high');
    expect(() => checkPriority('urgent', undefined)).toThrow(/high, normal, low/);

    const installation = await suite.install('fair-priority');
    const normal = await projects(installation, 'n', 100);
    const high = await projects(installation, 'h', 20);
    await writeFile(join(installation.packageDir, 'inspect-sleep-ms'), '50\n');
    await startWorker(installation, { concurrency: 2 });
    const { batches } = installation.runtime;
    const first = await batches.create(PLUGIN_ID, normal, 'alice');
    await waitFor('20 normal calls', async () => (await inspected(installation)).length >= 20);
    const before = (await inspected(installation)).length;
    const urgent = await batches.create(PLUGIN_ID, high, 'bob', { priority: 'high' });
    expect(urgent.priority).toBe('high');
    expectWhole(await finished(installation, urgent), high);
    const calls = (await inspected(installation)).slice(before);
    const lastHigh = Math.max(...high.map((id) => calls.indexOf(id)));
    // Strict priority but for one pick in ten (no starvation), plus the slots and buffer taken before.
    const normalsBetween = calls.slice(0, lastHigh + 1).filter((id) => id.startsWith('n')).length;
    expect(normalsBetween).toBeLessThanOrEqual(Math.ceil(high.length / 9) + 6);
    expectWhole(await finished(installation, first), normal);
    report.add(
      'a 20-project high batch created while a 100-project normal batch runs',
      'high first (one pick in ten still serves the lower class)',
      `${normalsBetween} normal calls ran before the high batch's last`,
    );
  }, 180_000);

  it("a schedule's priority: high set only by an admin, kept by its runs' batches, normal clears it", async () => {
    const installation = await suite.install('fair-schedule-priority');
    const ids = await projects(installation, 'p', 2);
    const { schedules, batches } = installation.runtime;
    const input = { pluginId: PLUGIN_ID, projects: ids, everyMs: 3_600_000, name: 'urgent' };
    await expect(schedules.add({ ...input, priority: 'high' }, 'op', 'operator')).rejects.toThrow(/admin/);
    await expect(schedules.add({ ...input, priority: 'low' }, 'op', 'operator')).resolves.toMatchObject({
      priority: 'low',
    });
    const schedule = await schedules.add({ ...input, name: 'urgent-2', priority: 'high' }, 'boss', 'admin');
    expect(schedule.priority).toBe('high');
    const run = await schedules.run(schedule.id, 'worker:test');
    const batch = await batches.get(run.batchId as string);
    expect(batch).toMatchObject({ priority: 'high', requester: 'boss', scheduleId: schedule.id });
    await expect(schedules.edit(schedule.id, { priority: 'high' }, 'op', 'operator')).rejects.toThrow(
      /admin/,
    );
    const edited = await schedules.edit(schedule.id, { priority: 'normal' }, 'op', 'operator');
    expect(edited.priority).toBeUndefined();
  });

  it("two requesters' queued operations alternate; one requester's stay in order", async () => {
    const installation = await suite.install('fair-operations');
    const ofAlice = await projects(installation, 'oa', 6);
    const ofBob = await projects(installation, 'ob', 6);
    const { operations } = installation.runtime;
    const request = (projectId: string) => ({
      pluginId: PLUGIN_ID,
      projectId,
      action: 'append',
      input: { append: projectId, sleepMs: 100 },
    });
    // All twelve queued before a worker takes one: alice's six first, then bob's.
    const created: { id: string }[] = [];
    for (const id of ofAlice) created.push((await operations.create(request(id), 'alice')).operation);
    for (const id of ofBob) created.push((await operations.create(request(id), 'bob')).operation);
    await startWorker(installation, { concurrency: 1 });
    const done = await waitFor(
      'the twelve operations to succeed',
      async () => {
        const views = await Promise.all(created.map((operation) => operations.get(operation.id)));
        return views.every((view) => view.state === 'succeeded') ? views : undefined;
      },
      60_000,
    );
    const order = [...done]
      .sort((a, b) => a.startedAt!.localeCompare(b.startedAt!))
      .map((view) => view.projectId);
    // FIFO would run oa000…oa005 then ob000…ob005.
    expect(order.map((id) => id.slice(0, 2))).toEqual(
      Array.from({ length: 12 }, (_, index) => (index % 2 === 0 ? 'oa' : 'ob')),
    );
    expect(order.filter((id) => id.startsWith('oa'))).toEqual(ofAlice);
    expect(order.filter((id) => id.startsWith('ob'))).toEqual(ofBob);
    report.add(
      'alice queues 6 operations, then bob 6 (1 worker slot)',
      'they alternate (FIFO: six of alice, then six of bob); each one in order',
      order.join(' '),
    );
  }, 120_000);

  it('a batch cancelled mid-turn leaves the queue; the other ends whole', async () => {
    const installation = await suite.install('fair-cancel');
    const kept = await projects(installation, 'k', 100);
    const dropped = await projects(installation, 'x', 100);
    await writeFile(join(installation.packageDir, 'inspect-sleep-ms'), '50\n');
    await startWorker(installation, { concurrency: 2 });
    const { runtime } = installation;
    const keep = await runtime.batches.create(PLUGIN_ID, kept, 'alice');
    const drop = await runtime.batches.create(PLUGIN_ID, dropped, 'bob');
    await waitFor('10 calls of the batch to cancel', async () =>
      (await inspected(installation)).filter((id) => id.startsWith('x')).length >= 10 ? true : undefined,
    );
    const cancelled = await runtime.batches.cancel(drop.batchId, ACTOR);
    const atCancel = (await inspected(installation)).filter((id) => id.startsWith('x')).length;
    expectWhole(await finished(installation, keep), kept);
    const after = (await inspected(installation)).filter((id) => id.startsWith('x')).length;
    // Only the calls running or already taken at the cancel (2 slots + the buffer) may follow it.
    expect(after - atCancel).toBeLessThanOrEqual(3);
    const view = await finished(installation, cancelled);
    expect(view.state).toBe('cancelled');
    expect(view.results).toHaveLength(dropped.length);
    const { redis, keys } = runtime;
    expect(await redis.hexists(keys.fairBatches, drop.batchId)).toBe(0);
    expect(Object.keys(await redis.hgetall(keys.fairSlices))).toEqual([]);
  }, 180_000);

  it('slices held by a worker whose slots expired leave the buffer count: the live workers stay fed', async () => {
    const installation = await suite.install('fair-holders');
    const ids = await projects(installation, 'h', 60);
    const { batches } = installation.runtime;
    const core = installation.runtime;
    const { fair } = batches;
    const slices = async () => core.redis.hkeys(core.keys.fairSlices);
    // No worker yet: the buffer is one slice.
    await batches.create(PLUGIN_ID, ids, ACTOR);
    expect(await slices()).toHaveLength(1);
    await fair.heartbeat('alive', 2);
    await fair.fill();
    expect(await slices()).toHaveLength(3);
    // Two of them taken by a worker that never heartbeats (killed before BullMQ sees the stall).
    const [first, second] = await slices();
    await fair.taken(first!, 'killed');
    await fair.taken(second!, 'killed');
    expect(await fair.fill()).toBe(2);
    expect(await slices()).toHaveLength(5);
    // Alive again, its slices count again: 5 out fill 2 + 2 slots plus one.
    await fair.heartbeat('killed', 2);
    expect(await fair.fill()).toBe(0);
    report.add(
      'fair buffer with a dead holder',
      'slices held by a worker without live slots do not count against the buffer',
      'slots 2 alive: 3 slices out; 2 taken by a dead worker: 2 more handed out; the worker back: none more',
    );
  });

  it('a worker killed with -9 and a Redis restart (AOF) mid-way: every project of both batches ends once', async () => {
    const installation = await suite.install('fair-faults');
    const first = await projects(installation, 'f', 150);
    const second = await projects(installation, 'g', 150);
    await writeFile(join(installation.packageDir, 'inspect-sleep-ms'), '40\n');
    const workers: Spawned[] = await Promise.all([startWorker(installation), startWorker(installation)]);
    const { runtime } = installation;
    const one = await runtime.batches.create(PLUGIN_ID, first, 'alice');
    const two = await runtime.batches.create(PLUGIN_ID, second, 'bob');
    await waitFor('60 calls', async () => ((await inspected(installation)).length >= 60 ? true : undefined));
    await kill9(workers[0]!);
    await waitFor('120 calls', async () =>
      (await inspected(installation)).length >= 120 ? true : undefined,
    );
    await suite.redis.kill();
    await sleep(1_000);
    await suite.redis.restart();
    await startWorker(installation);
    const views = await Promise.all([
      finished(installation, one, 180_000),
      finished(installation, two, 180_000),
    ]);
    expectWhole(views[0], first);
    expectWhole(views[1], second);
    const { redis, keys } = runtime;
    await waitFor('the fair queue to empty', async () =>
      (await redis.hlen(keys.fairBatches)) + (await redis.hlen(keys.fairSlices)) === 0 ? true : undefined,
    );
    const calls = await inspected(installation);
    report.add(
      'two 150-project batches (two requesters) on 2 workers; one worker killed -9, then Redis killed -9 and restarted (AOF everysec)',
      'both batches end whole (one result per project); the fair queue empties',
      `${calls.length} calls for 300 projects (a call cut by the kill runs again)`,
    );
  }, 300_000);
});
