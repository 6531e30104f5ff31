// A plugin's installation-wide caps (plugin-caps.ts, `plugin set
// --max-concurrency/--rate`) held by real worker processes on one Redis: the
// fixture records each inspection's [start, end] (spans.log), so what ran at
// once and per second is what the plugin saw. A worker killed with -9 gives
// its slot back when its lease (the job lock) ends; a call held back waits,
// shown as waiting, and never fails for it.
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useQueueSuite } from '../support/queue-suite.js';
import {
  ACTOR,
  PLUGIN_ID,
  kill9,
  pidOfIdentity,
  readLines,
  runCli,
  startWorker,
  untilBatchFinished,
  waitFor,
  type Installation,
  type Spawned,
} from '../support/workers.js';

const suite = useQueueSuite('8-plugin-caps');
const { report } = suite;

interface Span {
  project: string;
  pid: number;
  worker: number;
  start: number;
  end: number;
}

async function spans(installation: Installation): Promise<Span[]> {
  return (await readLines(join(installation.packageDir, 'spans.log'))).map((line) => {
    const [project, pid, worker, start, end] = line.split(' ');
    return {
      project: project!,
      pid: Number(pid),
      worker: Number(worker),
      start: Number(start),
      end: Number(end),
    };
  });
}

/** The most spans open at one instant. */
function mostAtOnce(list: Span[]): number {
  const edges = list.flatMap((span) => [
    { at: span.start, step: 1 },
    { at: span.end, step: -1 },
  ]);
  // An end before a start at the same millisecond: the slot was free again.
  edges.sort((a, b) => a.at - b.at || a.step - b.step);
  let open = 0;
  let most = 0;
  for (const edge of edges) most = Math.max(most, (open += edge.step));
  return most;
}

/** The most starts within any window of `windowMs`. */
function mostStartsPer(list: Span[], windowMs: number): number {
  const starts = list.map((span) => span.start).sort((a, b) => a - b);
  let most = 0;
  for (let first = 0, last = 0; last < starts.length; last += 1) {
    while (starts[last]! - starts[first]! >= windowMs) first += 1;
    most = Math.max(most, last - first + 1);
  }
  return most;
}

async function projects(installation: Installation, count: number): Promise<string[]> {
  const ids = Array.from({ length: count }, (_, index) => `c${String(index).padStart(2, '0')}`);
  await Promise.all(ids.map((id) => mkdir(join(installation.projectsDir, id))));
  await installation.runtime.projects.scan(installation.projectsDir, { trust: true }, ACTOR);
  await writeFile(join(installation.packageDir, 'record-spans'), '');
  return ids;
}

describe('installation-wide caps of one plugin', () => {
  it('--max-concurrency 2 holds across two worker processes of 3 slots each', async () => {
    const installation = await suite.install('caps-concurrency');
    const { runtime, packageDir } = installation;
    await projects(installation, 12);
    await writeFile(join(packageDir, 'inspect-sleep-ms'), '400\n');
    const detail = await runtime.plugins.setPolicy(PLUGIN_ID, { maxConcurrency: 2 }, ACTOR);
    expect(detail.caps).toEqual({ maxConcurrency: 2, rate: null });
    await Promise.all([
      startWorker(installation, { concurrency: 3 }),
      startWorker(installation, { concurrency: 3 }),
    ]);
    const batch = await runtime.batches.create(PLUGIN_ID, 'all', ACTOR);
    const final = await untilBatchFinished(runtime, batch.batchId, { timeoutMs: 90_000, results: false });
    const seen = await spans(installation);
    const most = mostAtOnce(seen);
    const workers = new Set(seen.map((span) => span.worker));
    report.add(
      'plugin capped --max-concurrency 2; a 12-project batch on two workers of 3 slots each, 400 ms per call',
      'every project succeeds; at most 2 calls at once (plugin-recorded spans); both workers ran calls',
      `${final.succeeded} succeeded, ${final.failed} failed; most at once ${most}; calls on ${workers.size} worker(s)`,
    );
    expect(final.succeeded).toBe(12);
    expect(most).toBe(2);
    expect(workers.size).toBe(2);
  });

  it('--rate 5/s holds across two workers: 15 calls take three windows of 5', async () => {
    const installation = await suite.install('caps-rate');
    const { runtime } = installation;
    await projects(installation, 15);
    await runtime.plugins.setPolicy(PLUGIN_ID, { rate: '5/s' }, ACTOR);
    await Promise.all([
      startWorker(installation, { concurrency: 3 }),
      startWorker(installation, { concurrency: 3 }),
    ]);
    const batch = await runtime.batches.create(PLUGIN_ID, 'all', ACTOR);
    const final = await untilBatchFinished(runtime, batch.batchId, { timeoutMs: 90_000, results: false });
    const seen = await spans(installation);
    const most = mostStartsPer(seen, 1_000);
    const starts = seen.map((span) => span.start);
    const elapsed = Math.max(...starts) - Math.min(...starts);
    report.add(
      'plugin capped --rate 5/s; a 15-project batch on two workers of 3 slots each',
      'every project succeeds; the 15 starts span at least 2 s (three windows of 5); the busiest plugin-seen second shown (spawn jitter)',
      `${final.succeeded} succeeded; most starts in 1 s ${most}; first to last start ${elapsed} ms`,
    );
    expect(final.succeeded).toBe(15);
    // A sliding window of 1 s admits 15 calls in three bursts of 5, at least 2 s from first to last
    // (Redis' clock). The plugin sees each start later by its spawn time, which a loaded machine spreads
    // unevenly (two bursts can meet in one plugin-seen second), so only the span is asserted.
    expect(elapsed).toBeGreaterThanOrEqual(1_800);
    expect(most).toBeLessThan(15);
  });

  it('a worker killed with -9 while it holds the only slot: the slot comes back with its lease, the waiter shown waiting', async () => {
    const installation = await suite.install('caps-kill');
    const { runtime } = installation;
    const heldRoot = await installation.addProject('held');
    await projects(installation, 1);
    const lockMs = 3_000;
    await runtime.plugins.setPolicy(PLUGIN_ID, { maxConcurrency: 1 }, ACTOR);
    const workers = await Promise.all([
      startWorker(installation, { concurrency: 1, lockDurationMs: lockMs }),
      startWorker(installation, { concurrency: 1, lockDurationMs: lockMs }),
    ]);
    // An operation holds the one slot for 60 s.
    const { operation } = await runtime.operations.create(
      {
        pluginId: PLUGIN_ID,
        projectId: 'held',
        action: 'append',
        input: { append: 'held', sleepMs: 60_000 },
      },
      ACTOR,
    );
    await waitFor(
      'the held operation to start',
      async () => (await readLines(join(heldRoot, 'operations.log'))).length,
    );
    const holderPid = pidOfIdentity((await runtime.operations.store.get(operation.id))?.worker);
    const holder = workers.find((worker) => worker.pid === holderPid) as Spawned;
    expect(holder).toBeDefined();
    // The other worker takes the inspection and waits for the slot: shown waiting, not failed.
    const batch = await runtime.batches.create(PLUGIN_ID, ['c00'], ACTOR);
    const waiting = await waitFor(
      'the inspection shown waiting in `switchyard queue --json`',
      async () => {
        const { code, stdout } = await runCli(installation, ['queue']);
        if (code !== 0) return undefined;
        const view = JSON.parse(stdout) as QueueJson;
        const slot = view.workers.flatMap((worker) => worker.slots).find((s) => s.batchId === batch.batchId);
        return slot?.state === 'waiting' ? { view, slot } : undefined;
      },
      20_000,
      100,
    );
    expect(waiting.slot.reason).toMatch(/max-concurrency/);
    const work = waiting.view.requesters.flatMap((requester) => requester.work);
    expect(work.find((item) => item.id === batch.batchId)).toMatchObject({
      kind: 'batch',
      waitingForCaps: 1,
    });
    expect(work.find((item) => item.id === operation.id)).toMatchObject({ kind: 'operation', running: 1 });
    expect((await runtime.batches.store.get(batch.batchId, { results: false }))?.state).toBe('running');

    await kill9(holder);
    const killedAt = Date.now();
    const final = await untilBatchFinished(runtime, batch.batchId, { timeoutMs: 30_000, results: false });
    const [span] = await spans(installation);
    const afterKill = span!.start - killedAt;
    report.add(
      `the worker holding the only slot (lease = job lock ${lockMs} ms, renewed every third) killed with -9; another worker's call waits`,
      'the waiting call starts once the lease ends: no sooner than two thirds of it after the kill, and not much later than all of it',
      `${final.succeeded} succeeded; the waiting call started ${afterKill} ms after the kill`,
    );
    expect(final.succeeded).toBe(1);
    expect(afterKill).toBeGreaterThanOrEqual((lockMs * 2) / 3 - 200);
    expect(afterKill).toBeLessThanOrEqual(lockMs + 2_000);
  });

  it('an operation held back by the cap stays running, marked waiting with why, then succeeds', async () => {
    const installation = await suite.install('caps-operation-waits');
    const { runtime, packageDir } = installation;
    await projects(installation, 1);
    const root = await installation.addProject('op');
    // The inspection holds the slot until the test has seen the operation waiting, however slow the runner.
    await writeFile(join(packageDir, 'inspect-hold'), '');
    await runtime.plugins.setPolicy(PLUGIN_ID, { maxConcurrency: 1 }, ACTOR);
    await Promise.all([
      startWorker(installation, { concurrency: 1, operationPriorityMs: 0 }),
      startWorker(installation, { concurrency: 1, operationPriorityMs: 0 }),
    ]);
    await runtime.batches.create(PLUGIN_ID, ['c00'], ACTOR);
    await waitFor(
      'the inspection to run',
      async () => (await readLines(join(packageDir, 'calls.log'))).length,
    );
    const { operation } = await runtime.operations.create(
      { pluginId: PLUGIN_ID, projectId: 'op', action: 'append', input: { append: 'after' } },
      ACTOR,
    );
    // The view `op show --json` prints, read while the call waits (a loaded machine's CLI may start after it ran).
    const shown = await waitFor(
      'the operation marked waiting',
      async () => {
        const view = await runtime.operations.get(operation.id);
        return view.waiting ? view : undefined;
      },
      60_000,
      50,
    );
    await rm(join(packageDir, 'inspect-hold'));
    const final = await runtime.operations.wait(operation.id, {
      signal: AbortSignal.timeout(30_000),
      pollMs: 100,
    });
    const after = await runtime.operations.get(operation.id);
    report.add(
      'an operation submitted while an inspection holds the only slot (--max-concurrency 1)',
      '`op show` says running and waiting with the reason; it then succeeds; the mark is gone',
      `shown ${shown.state}, waiting: "${shown.waiting}"; ended ${final.state}; waiting after: ${after.waiting ?? 'none'}`,
    );
    expect(shown.state).toBe('running');
    expect(shown.waiting).toMatch(/--max-concurrency/);
    expect(final.state).toBe('succeeded');
    expect(after.waiting).toBeUndefined();
    expect(await readLines(join(root, 'operations.log'))).toHaveLength(1);
  });

  it('plugin set takes --max-concurrency and --rate, plugin show prints them, none clears them, the audit keeps each change', async () => {
    const installation = await suite.install('caps-cli');
    const set = await runCli(installation, [
      'plugin',
      'set',
      PLUGIN_ID,
      '--max-concurrency',
      '4',
      '--rate',
      '600/m',
    ]);
    expect(set.code, set.stderr).toBe(0);
    expect(JSON.parse(set.stdout).caps).toEqual({ maxConcurrency: 4, rate: '600/m' });
    const text = await runCli(installation, ['plugin', 'show', PLUGIN_ID], { json: false });
    expect(text.stdout).toContain('caps across the installation: at most 4 at once, at most 600/m');
    const bad = await runCli(installation, ['plugin', 'set', PLUGIN_ID, '--rate', '5/h']);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/20\/s or 100\/m/);
    const cleared = await runCli(installation, [
      'plugin',
      'set',
      PLUGIN_ID,
      '--max-concurrency',
      'none',
      '--rate',
      'none',
    ]);
    expect(JSON.parse(cleared.stdout).caps, cleared.stdout + cleared.stderr).toEqual({
      maxConcurrency: null,
      rate: null,
    });
    const audit = await runCli(installation, ['audit', '--action', 'plugin.set']);
    const entries = JSON.parse(audit.stdout) as
      { items?: { detail: { caps?: unknown } }[] } | { detail: { caps?: unknown } }[];
    const list = Array.isArray(entries) ? entries : (entries.items ?? []);
    expect(list.map((entry) => entry.detail.caps)).toEqual(
      expect.arrayContaining([
        { maxConcurrency: 4, rate: '600/m' },
        { maxConcurrency: 'none', rate: 'none' },
      ]),
    );
  });
});

interface QueueJson {
  requesters: {
    requester: string;
    work: { kind: string; id: string; waitingForCaps: number; running: number }[];
  }[];
  workers: { worker: string; slots: { state: string; batchId?: string; reason?: string }[] }[];
}
