// Fairness: single operations (fixture-inspector's fixture.echo, through
// createOperation → terminal state) submitted one after another while a
// 2,000-project native-fixture batch runs on the same workers (2 worker
// processes × concurrency 2), against the same operations on an idle system.
// Phases alternate idle → busy → idle → busy so background load hits both.
// Operations use their own BullMQ queue (operate), consumed by each worker
// process's own operate Worker, so they never wait behind queued inspections;
// what remains is CPU contention. Target: busy p95 ≤ 2 × idle p95.
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
  const workers = [await startWorker(install, redis.url, 2), await startWorker(install, redis.url, 2)];
  const { work } = install.runtime;
  await sleep(2_100); // past the fingerprint cache's racy-ctime window

  async function operation(index) {
    const started = performance.now();
    const { operation } = await work.createOperation(
      { pluginId: 'fixture-inspector', projectId: target, action: 'fixture.echo', input: { index } },
      ACTOR,
    );
    const done = await work.waitOperation(operation.id, { pollMs: 5 });
    if (done.state !== 'succeeded') throw new Error(`operation ended ${done.state}: ${done.errorMessage}`);
    return performance.now() - started;
  }

  for (let index = 0; index < 3; index += 1) await operation(index); // warm-up
  const samples = { idle: [], busy: [] };
  const batchRuns = [];
  for (const phase of ['idle', 'busy', 'idle', 'busy']) {
    if (phase === 'idle') {
      for (let index = 0; index < perPhase; index += 1) samples.idle.push(await operation(index));
      continue;
    }
    const started = performance.now();
    const batch = await work.createBatch('native-fixture', ids, ACTOR);
    let taken = 0;
    for (;;) {
      const view = await work.batches.get(batch.batchId, { results: false });
      if (view.state === 'finished') {
        batchRuns.push({ ms: performance.now() - started, ops: taken, view });
        break;
      }
      if (taken < perPhase) {
        samples.busy.push(await operation(taken));
        taken += 1;
      } else await sleep(100);
    }
    console.error(`busy phase: ${taken} operations during a ${projects}-project batch`);
  }
  for (const worker of workers) await worker.stop();

  const row = (name) => [
    name === 'idle' ? 'idle system' : `during a ${projects}-project batch (2 workers × 2)`,
    samples[name].length,
    percentile(samples[name], 50).toFixed(1),
    percentile(samples[name], 95).toFixed(1),
  ];
  console.log(`Fairness: fixture.echo operation latency, request → terminal state (${note})\n`);
  console.log(table(['system', 'operations', 'p50 ms', 'p95 ms'], [row('idle'), row('busy')]));
  console.log(
    `\nbatches: ${batchRuns.map((run) => `${(run.ms / 1000).toFixed(1)} s (${run.view.succeeded} ok)`).join(', ')}`,
  );
  const ratio = percentile(samples.busy, 95) / percentile(samples.idle, 95);
  console.log(
    `p95 busy ÷ idle: ${ratio.toFixed(2)} (target ≤ 2) ${ratio <= 2 ? 'MET' : 'NOT MET'}; p50 busy ÷ idle: ${(percentile(samples.busy, 50) / percentile(samples.idle, 50)).toFixed(2)}`,
  );
} finally {
  await cleanup();
}
