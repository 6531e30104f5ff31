// Batch throughput: an orchestrated batch of N native-fixture inspections
// (createBatch → finished) on 2 worker processes × concurrency 2, against two
// baselines measured in the same run with the same total concurrency (4):
//   direct — the core supervisor via core.plugins.inspect, no queue;
//   bare   — spawn the executable, close stdin, wait for exit (no protocol).
// The variants alternate over several rounds (order rotated each round) so
// background load hits them alike; calls/s is the median over the rounds.
// Target: orchestrated ÷ direct ≥ 0.85.
//
//   node bench/batch-throughput.mjs [projects=2000] [rounds=3]
import { join } from 'node:path';
import {
  NATIVE_FIXTURE_DIST,
  addProjects,
  bareSpawn,
  cleanup,
  machineNote,
  makeInstallation,
  median,
  pool,
  runBatch,
  sleep,
  startRedis,
  startWorker,
  table,
} from './lib.mjs';

const projects = Number(process.argv[2] ?? 2000);
const rounds = Number(process.argv[3] ?? 3);
const WORKERS = 2;
const CONCURRENCY = 2;
const TOTAL = WORKERS * CONCURRENCY;

try {
  const note = await machineNote();
  const redis = await startRedis();
  const install = await makeInstallation(redis.url, [
    { name: 'native-fixture', from: NATIVE_FIXTURE_DIST, id: 'native-fixture' },
  ]);
  const ids = await addProjects(install, projects);
  const packageDir = install.dirs['native-fixture'];
  const executable = join(packageDir, 'native-fixture');
  const workers = [];
  for (let index = 0; index < WORKERS; index += 1) {
    workers.push(await startWorker(install, redis.url, CONCURRENCY));
  }
  const { plugins } = install.runtime.core;
  // The fingerprint cache refuses files changed in the last 2 s (racy ctime): let the copy age.
  await sleep(2_100);

  const variants = {
    bare: async () => {
      const started = performance.now();
      await pool(projects, TOTAL, () => bareSpawn(executable, packageDir));
      return performance.now() - started;
    },
    direct: async () => {
      const started = performance.now();
      await pool(projects, TOTAL, (index) => plugins.inspect('native-fixture', ids[index]));
      return performance.now() - started;
    },
    orchestrated: async () => {
      const { batch, ms } = await runBatch(install, 'native-fixture', ids, { pollMs: 20 });
      if (batch.succeeded !== projects)
        throw new Error(`batch ended ${batch.succeeded} succeeded / ${batch.failed} failed`);
      return ms;
    },
  };
  // Warm-up: a short batch and a few direct calls (JIT, connections, fingerprint cache).
  await runBatch(install, 'native-fixture', ids.slice(0, 40), { pollMs: 20 });
  await pool(40, TOTAL, (index) => plugins.inspect('native-fixture', ids[index]));

  const names = Object.keys(variants);
  const times = Object.fromEntries(names.map((name) => [name, []]));
  for (let round = 0; round < rounds; round += 1) {
    const order = names.map((_, index) => names[(index + round) % names.length]);
    for (const name of order) {
      const ms = await variants[name]();
      times[name].push(ms);
      console.error(`round ${round + 1}/${rounds} ${name}: ${((projects / ms) * 1000).toFixed(0)} calls/s`);
    }
  }

  const rate = (name) => (projects / median(times[name])) * 1000;
  const rows = names.map((name) => [
    name === 'orchestrated'
      ? `orchestrated: createBatch → finished, ${WORKERS} worker processes × concurrency ${CONCURRENCY}`
      : name === 'direct'
        ? `direct: core.plugins.inspect in-process, concurrency ${TOTAL}, no queue`
        : `bare spawn of the executable, concurrency ${TOTAL}, no protocol`,
    rate(name).toFixed(0),
    times[name].map((ms) => (ms / 1000).toFixed(2)).join(', '),
  ]);
  console.log(`Batch throughput, ${projects} projects, native-fixture (${note})\n`);
  console.log(table(['variant', 'calls/s (median)', `wall s per round (${rounds} rounds)`], rows));
  const ratio = rate('orchestrated') / rate('direct');
  console.log(
    `\norchestrated ÷ direct: ${ratio.toFixed(3)} (target ≥ 0.85) ${ratio >= 0.85 ? 'MET' : 'NOT MET'}; direct ÷ bare spawn: ${(rate('direct') / rate('bare')).toFixed(3)}`,
  );
  for (const worker of workers) await worker.stop();
} finally {
  await cleanup();
}
