// Fairness: single operations (fixture-inspector's fixture.echo, through
// createOperation → terminal state) submitted one after another while a
// 2,000-project native-fixture batch runs on the same workers (2 worker
// processes × concurrency 2), against the same operations on an idle system.
// Operations use their own BullMQ queue (operate), so they never wait behind
// queued inspections; what remains is CPU contention, which the workers'
// operation priority (src/worker/operation-priority.ts) removes: while an
// operation runs, no worker starts a new inspection call. Busy phases run with
// the priority on (the default) and off (--operation-priority 0), interleaved
// with idle phases so background load hits all three.
// Target: busy p95 ≤ 2 × idle p95 with the default.
//
//   node bench/fairness.mjs [projects=2000] [operations per phase=25]
import {
  ACTOR,
  FIXTURE_INSPECTOR_DIST,
  NATIVE_FIXTURE_DIST,
  addProjects,
  cleanup,
  machineNote,
  makeInstallation,
  percentile,
  sleep,
  startRedis,
  startWorker,
  table,
} from './lib.mjs';

const projects = Number(process.argv[2] ?? 2000);
const perPhase = Number(process.argv[3] ?? 25);
const PRIORITY_ON = 'busy, priority on (default)';
const PRIORITY_OFF = 'busy, priority off';

try {
  const note = await machineNote();
  const redis = await startRedis();
  const install = await makeInstallation(redis.url, [
    { name: 'native-fixture', from: NATIVE_FIXTURE_DIST, id: 'native-fixture' },
    {
      name: 'fixture-inspector',
      from: FIXTURE_INSPECTOR_DIST,
      id: 'fixture-inspector',
      scopes: ['project.metadata.read', 'project.files.read', 'project.operate'],
    },
  ]);
  const ids = await addProjects(install, projects);
  const [target] = await addProjects(install, 1, { idPrefix: 'op-target-' });
  const { batches, operations } = install.runtime;

  /** @type {import('./lib.mjs').BenchWorker[]} */
  let workers = [];
  /** @type {boolean | undefined} */
  let workersPriority;
  /** @param {boolean} priorityOn */
  async function useWorkers(priorityOn) {
    if (workersPriority === priorityOn) return;
    for (const worker of workers) await worker.stop();
    const extra = priorityOn ? [] : ['--operation-priority', '0'];
    workers = [
      await startWorker(install, redis.url, 2, extra),
      await startWorker(install, redis.url, 2, extra),
    ];
    workersPriority = priorityOn;
  }

  /**
   * One operation's latency, request → terminal state, in ms.
   * @param {number} index
   */
  async function operation(index) {
    const started = performance.now();
    const { operation } = await operations.create(
      { pluginId: 'fixture-inspector', projectId: target, action: 'fixture.echo', input: { index } },
      ACTOR,
    );
    const done = await operations.wait(operation.id, { pollMs: 5 });
    if (done.state !== 'succeeded') throw new Error(`operation ended ${done.state}: ${done.errorMessage}`);
    return performance.now() - started;
  }

  await useWorkers(true);
  await sleep(2_100); // past the fingerprint cache's racy-ctime window
  for (let index = 0; index < 3; index += 1) await operation(index); // warm-up
  /** @type {Record<string, number[]>} */
  const samples = { idle: [], [PRIORITY_ON]: [], [PRIORITY_OFF]: [] };
  /** @type {Record<string, { ms: number, view: import('./lib.mjs').BatchView }[]>} */
  const batchRuns = { [PRIORITY_ON]: [], [PRIORITY_OFF]: [] };
  const phases = ['idle', PRIORITY_ON, PRIORITY_OFF, 'idle', PRIORITY_OFF, PRIORITY_ON];
  for (const phase of phases) {
    if (phase === 'idle') {
      for (let index = 0; index < perPhase; index += 1) samples.idle.push(await operation(index));
      continue;
    }
    await useWorkers(phase === PRIORITY_ON);
    const started = performance.now();
    const batch = await batches.create('native-fixture', ids, ACTOR);
    let taken = 0;
    for (;;) {
      const view = await batches.store.get(batch.batchId, { results: false });
      if (!view) throw new Error(`batch ${batch.batchId} disappeared while it ran`);
      if (view.state !== 'running') {
        batchRuns[phase].push({ ms: performance.now() - started, view });
        break;
      }
      if (taken < perPhase) {
        samples[phase].push(await operation(taken));
        taken += 1;
      } else await sleep(100);
    }
    console.error(`${phase}: ${taken} operations during a ${projects}-project batch`);
  }
  for (const worker of workers) await worker.stop();

  /** @param {string} name */
  const p95 = (name) => percentile(samples[name], 95);
  /** @param {string} name */
  const row = (name) => [
    name === 'idle' ? 'idle system' : `${name}: during a ${projects}-project batch (2 workers × 2)`,
    samples[name].length,
    percentile(samples[name], 50).toFixed(1),
    p95(name).toFixed(1),
    name === 'idle' ? '—' : (p95(name) / p95('idle')).toFixed(2),
    name === 'idle'
      ? '—'
      : batchRuns[name].map((run) => `${(run.ms / 1000).toFixed(1)} s (${run.view.succeeded} ok)`).join(', '),
  ];
  console.log(`Fairness: fixture.echo operation latency, request → terminal state (${note})\n`);
  console.log(
    table(
      ['system', 'operations', 'p50 ms', 'p95 ms', 'p95 ÷ idle', 'batch runs'],
      ['idle', PRIORITY_ON, PRIORITY_OFF].map(row),
    ),
  );
  const ratio = p95(PRIORITY_ON) / p95('idle');
  console.log(
    `\np95 busy ÷ idle with the default priority: ${ratio.toFixed(2)} (target ≤ 2) ${ratio <= 2 ? 'MET' : 'NOT MET'}; without it: ${(p95(PRIORITY_OFF) / p95('idle')).toFixed(2)}`,
  );
} finally {
  await cleanup();
}
