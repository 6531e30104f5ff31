// The orchestrated batch, this checkout against another build, in one run:
// each build gets its own redis-server, installation and two real worker
// processes (concurrency 2 each, as batch-throughput runs them), all started
// at once; rounds alternate between the builds (order rotated), each a whole
// native-fixture batch over the same number of projects. Per round: calls/s
// and the workers' CPU per call with their spawn helpers (/proc), medians per
// build and the ratio. On a machine whose speed drifts by ±20 % between runs
// (this one), paired rounds tell a 10 % change apart where separate runs
// cannot.
//
//   node bench/batch-builds.mjs <other checkout, built> [projects=2000] [rounds=6]
import { join, resolve } from 'node:path';
import * as here from './lib.mjs';

const other = resolve(process.argv[2] ?? '');
if (!process.argv[2]) {
  console.error('usage: node bench/batch-builds.mjs <other checkout, built> [projects=2000] [rounds=6]');
  process.exit(2);
}
const projects = Number(process.argv[3] ?? 2000);
const rounds = Number(process.argv[4] ?? 6);
const WORKERS = 2;
const CONCURRENCY = 2;
const WARM_CALLS = 2_000;

/** @type {typeof here} */
const there = await import(join(other, 'bench', 'lib.mjs'));
const builds = [
  { name: `this (${here.REPO})`, lib: here },
  { name: `other (${other})`, lib: there },
];
const stopAll = async () => {
  await there.cleanup();
  await here.cleanup();
};
process.once('SIGINT', () => void stopAll().then(() => process.exit(130)));

try {
  const note = await here.machineNote();
  const setups = [];
  for (const { lib } of builds) {
    const redis = await lib.startRedis();
    const install = await lib.makeInstallation(redis.url, [
      { name: 'native-fixture', from: lib.NATIVE_FIXTURE_DIST, id: 'native-fixture' },
    ]);
    const ids = await lib.addProjects(install, projects);
    const workers = [];
    for (let index = 0; index < WORKERS; index++)
      workers.push(await lib.startWorker(install, redis.url, CONCURRENCY));
    setups.push({ lib, install, ids, workers });
  }
  // Warm: helpers started, past the fingerprint cache's racy window, and 2,000 calls per build:
  // V8's compiler takes a share of the workers' CPU for the first thousands of calls
  // (bench/perf-worker.mjs), which made the first rounds the slowest.
  await here.sleep(2_500);
  for (const { lib, install, ids } of setups)
    for (let done = 0; done < WARM_CALLS; done += Math.min(projects, WARM_CALLS - done))
      await lib.runBatch(install, 'native-fixture', ids.slice(0, Math.min(projects, WARM_CALLS - done)), {
        pollMs: 20,
      });

  /** @type {{ rate: number[], cpu: number[], helpers: number[] }[]} */
  const figures = builds.map(() => ({ rate: [], cpu: [], helpers: [] }));
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? [0, 1] : [1, 0];
    for (const index of order) {
      const { lib, install, ids, workers } = setups[index];
      const before = await Promise.all(workers.map((worker) => lib.hostCpuMs(worker.pid)));
      const { batch, ms } = await lib.runBatch(install, 'native-fixture', ids, { pollMs: 20 });
      const after = await Promise.all(workers.map((worker) => lib.hostCpuMs(worker.pid)));
      if (batch.state !== 'succeeded' || batch.succeeded !== projects)
        throw new Error(
          `${builds[index].name}: the batch ended ${batch.state}, ${batch.succeeded} succeeded`,
        );
      const sum = (/** @type {'total' | 'helpers'} */ key) =>
        after.reduce((total, now, at) => total + now[key] - before[at][key], 0) / projects;
      figures[index].rate.push((projects * 1000) / ms);
      figures[index].cpu.push(sum('total'));
      figures[index].helpers.push(sum('helpers'));
      console.log(
        `round ${round + 1}/${rounds} ${builds[index].name}: ${Math.round((projects * 1000) / ms)} calls/s, workers ${sum('total').toFixed(3)} ms/call (helpers ${sum('helpers').toFixed(3)})`,
      );
    }
  }
  const medians = figures.map((figure) => ({
    rate: here.median(figure.rate),
    cpu: here.median(figure.cpu),
    helpers: here.median(figure.helpers),
  }));
  // Paired: each round's two batches ran back to back.
  const ratios = figures[0].cpu.map((cpu, round) => cpu / figures[1].cpu[round]);
  console.log(
    `\nOrchestrated batch per build, ${projects} projects × ${rounds} rounds, ${WORKERS} workers × concurrency ${CONCURRENCY} each (${note})\n`,
  );
  console.log(
    here.table(
      ['build', 'calls/s (median)', 'workers + helpers CPU ms/call (median)', 'of which helpers'],
      builds.map((build, index) => [
        build.name,
        String(Math.round(medians[index].rate)),
        medians[index].cpu.toFixed(3),
        medians[index].helpers.toFixed(3),
      ]),
    ),
  );
  console.log(
    `\nthis ÷ other: calls/s ${(medians[0].rate / medians[1].rate).toFixed(3)}, CPU per call ${(medians[0].cpu / medians[1].cpu).toFixed(3)} (paired rounds: median ${here.median(ratios).toFixed(3)}, ${ratios.filter((ratio) => ratio < 1).length} of ${rounds} rounds lower)`,
  );
} finally {
  await stopAll();
}
