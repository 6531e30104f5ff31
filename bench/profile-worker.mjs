// Where a worker's CPU goes during a batch: the worker processes run under
// `node --cpu-prof`; one 2,000-project native-fixture batch (2 workers ×
// concurrency 2, as in batch-throughput.mjs) after a short warm-up; the
// workers are stopped (SIGTERM, so the profiles are written) and the profiles
// summarised: self time by area and the top frames. Host CPU per call from
// /proc (worker + its spawn helper) is printed too (inflated by the profiler:
// the figure to quote comes from batch-throughput.mjs).
//
//   node bench/profile-worker.mjs [projects=2000] [top=30] [keep-dir]
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { profileFiles, render, summarise } from './cpu-profile.mjs';
import {
  NATIVE_FIXTURE_DIST,
  addProjects,
  cleanup,
  hostCpuMs,
  machineNote,
  makeInstallation,
  onCleanup,
  runBatch,
  sleep,
  startRedis,
  startWorker,
} from './lib.mjs';

const projects = Number(process.argv[2] ?? 2000);
const top = Number(process.argv[3] ?? 30);
const keepDir = process.argv[4];
const WORKERS = 2;
const CONCURRENCY = 2;

try {
  const note = await machineNote();
  const profileDir = keepDir ?? (await mkdtemp(join(tmpdir(), 'switchyard-bench-prof-')));
  if (!keepDir) onCleanup(() => rm(profileDir, { recursive: true, force: true }));
  const redis = await startRedis();
  const install = await makeInstallation(redis.url, [
    { name: 'native-fixture', from: NATIVE_FIXTURE_DIST, id: 'native-fixture' },
  ]);
  const ids = await addProjects(install, projects);
  const workers = [];
  for (let index = 0; index < WORKERS; index += 1) {
    workers.push(
      await startWorker(install, redis.url, CONCURRENCY, [], {
        nodeArgs: ['--cpu-prof', '--cpu-prof-dir', profileDir],
      }),
    );
  }
  await sleep(2_100); // past the fingerprint cache's racy-ctime window
  await runBatch(install, 'native-fixture', ids.slice(0, 40), { pollMs: 20 });
  const before = await Promise.all(workers.map((worker) => hostCpuMs(worker.pid)));
  const fromUs = Number(process.hrtime.bigint() / 1000n);
  const { batch, ms } = await runBatch(install, 'native-fixture', ids, { pollMs: 50 });
  const toUs = Number(process.hrtime.bigint() / 1000n);
  const after = await Promise.all(workers.map((worker) => hostCpuMs(worker.pid)));
  console.error(`window ${fromUs}..${toUs} µs`);
  for (const worker of workers) await worker.stop();
  if (batch.succeeded !== projects)
    throw new Error(`batch: ${batch.succeeded} succeeded, ${batch.failed} failed`);

  /**
   * @param {{ own: number, helpers: number }[]} list
   * @param {'own' | 'helpers'} key
   */
  const sum = (list, key) => list.reduce((total, item) => total + item[key], 0);
  const own = sum(after, 'own') - sum(before, 'own');
  const helpers = sum(after, 'helpers') - sum(before, 'helpers');
  console.log(
    `Worker CPU profile, ${projects}-project batch, ${WORKERS} workers × concurrency ${CONCURRENCY} (${note})`,
  );
  console.log(
    `batch ${(ms / 1000).toFixed(2)} s = ${((projects / ms) * 1000).toFixed(0)} calls/s under the profiler; ` +
      `worker CPU ${(own / projects).toFixed(2)} ms/call + spawn helper ${(helpers / projects).toFixed(2)} ms/call (/proc, 10 ms ticks)\n`,
  );
  // Only the samples taken while the measured batch ran (not start-up, not the warm-up).
  const summary = await summarise(await profileFiles(profileDir), { fromUs, toUs });
  console.log(render(summary, { top, calls: projects }));
  if (keepDir) console.log(`\nprofiles kept in ${keepDir}`);
} finally {
  await cleanup();
}
