// Batch throughput: an orchestrated batch of N native-fixture inspections
// (createBatch → finished) on 2 worker processes × concurrency 2, against two
// baselines measured in the same run with the same total concurrency (4):
//   minimal — the minimal host (bench/minimal-host.c, compiled here): posix_spawn,
//             the two lines, reap; 4 threads; the cheapest way this machine runs a call;
//   direct  — the core supervisor via core.plugins.inspect in this process, no queue;
//   xargs, parallel — what a shell user would do instead: `xargs -P4` and GNU
//             `parallel -j4`, each running `sh call.sh <index>` per project, which
//             pipes the minimal host's two request lines into the executable in its
//             package directory; every answer file is checked (bench/lib.mjs
//             runShellPeer). GNU parallel is skipped, with a note, when missing
//             (`apt-get install -y parallel`).
// The variants alternate over several rounds (order rotated each round) so
// background load hits them alike; calls/s is the median over the rounds.
// Host CPU per call: the worker processes' user+sys CPU (with their spawn
// helpers, /proc) ÷ calls, minus the minimal host's own CPU per call (what the
// same spawns cost the spawning process).
// Targets (docs/adr/0008-host-share-against-a-minimal-host.md), ratios to references of the same run so they hold on
// any machine: orchestrated ≥ 0.9× minimal, direct ≥ 0.95× minimal, host CPU per call ≤ 1× the minimal host's own
// CPU per call. The peers have no target: their figure is orchestrated ÷ peer.
//
//   node bench/batch-throughput.mjs [projects=2000] [rounds=3]
import { join } from 'node:path';
import { pluginEnvironment } from '@switchyard/plugin-sdk/host';
import {
  NATIVE_FIXTURE_DIST,
  addProjects,
  buildMinimalHost,
  childrenNamed,
  cleanup,
  hostCpuMs,
  machineNote,
  makeInstallation,
  median,
  pool,
  processCpuMs,
  rotatedRounds,
  runBatch,
  runMinimalHost,
  runShellPeer,
  shellPeerVersion,
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
const WARM_CALLS = 4_000;
/** Workers with their spawn helpers, minus the minimal host's own, per call: at most this many times the minimal host's own. */
const HOST_CPU_TARGET_RATIO = 1;
const ORCHESTRATED_TARGET = 0.9;
const DIRECT_TARGET = 0.95;

try {
  const note = await machineNote();
  const xargsVersion = await shellPeerVersion('xargs');
  const parallelVersion = await shellPeerVersion('parallel');
  if (!parallelVersion)
    console.error(
      'GNU parallel is not installed (no parallel on PATH, or not the GNU one): the "parallel -j4" peer is SKIPPED (apt-get install -y parallel)',
    );
  const minimalHost = await buildMinimalHost();
  const redis = await startRedis();
  const install = await makeInstallation(redis.url, [
    { name: 'native-fixture', from: NATIVE_FIXTURE_DIST, id: 'native-fixture' },
  ]);
  const ids = await addProjects(install, projects);
  const packageDir = install.dirs['native-fixture'];
  const executable = join(packageDir, 'native-fixture');
  /** @type {import('./lib.mjs').BenchWorker[]} */
  const workers = [];
  for (let index = 0; index < WORKERS; index += 1) {
    workers.push(await startWorker(install, redis.url, CONCURRENCY));
  }
  const { plugins } = install.runtime;
  // The fingerprint cache refuses files changed in the last 2 s (racy ctime): let the copy age.
  await sleep(2_100);

  const sum = (/** @type {number[]} */ list) => list.reduce((total, value) => total + value, 0);
  /** This process's CPU (ms) plus its spawn helper's: the direct variant's host. */
  const ownCpuMs = async () => {
    const usage = process.cpuUsage();
    let helpers = 0;
    for (const pid of await childrenNamed(process.pid, 'sy-spawner'))
      helpers += (await processCpuMs(pid)) ?? 0;
    return (usage.user + usage.system) / 1000 + helpers;
  };
  /** CPU ms per call, one figure per round, by variant and by what spent it. */
  /** @type {Record<'minimal' | 'direct' | 'orchestrated' | 'plugin' | 'redis' | 'callTrees' | 'helpers', number[]>} */
  const cpu = {
    minimal: [],
    direct: [],
    orchestrated: [],
    plugin: [],
    redis: [],
    callTrees: [],
    helpers: [],
  };
  // The shell peers run with the plugin environment plus HOME (GNU parallel keeps its state there).
  const peerEnv = { ...pluginEnvironment(), HOME: process.env.HOME ?? '/tmp' };
  /** @type {Record<string, () => Promise<number>>} */
  const variants = {
    minimal: async () => {
      const report = await runMinimalHost(
        minimalHost,
        executable,
        packageDir,
        projects,
        TOTAL,
        pluginEnvironment(),
      );
      cpu.minimal.push((report.selfUserMs + report.selfSysMs) / projects);
      cpu.plugin.push((report.childUserMs + report.childSysMs) / projects);
      return report.ms;
    },
    direct: async () => {
      const before = await ownCpuMs();
      const started = performance.now();
      await pool(projects, TOTAL, (index) => plugins.inspect('native-fixture', ids[index]));
      const ms = performance.now() - started;
      cpu.direct.push(((await ownCpuMs()) - before) / projects);
      return ms;
    },
    orchestrated: async () => {
      const before = await Promise.all(workers.map((worker) => hostCpuMs(worker.pid)));
      const redisPid = /** @type {number} */ (redis.pid);
      const redisBefore = (await processCpuMs(redisPid)) ?? 0;
      const { batch, ms } = await runBatch(install, 'native-fixture', ids, { pollMs: 20 });
      const after = await Promise.all(workers.map((worker) => hostCpuMs(worker.pid)));
      cpu.redis.push((((await processCpuMs(redisPid)) ?? 0) - redisBefore) / projects);
      cpu.callTrees.push(
        (sum(after.map((entry) => entry.calls)) - sum(before.map((entry) => entry.calls))) / projects,
      );
      if (batch.succeeded !== projects)
        throw new Error(`batch ended ${batch.succeeded} succeeded / ${batch.failed} failed`);
      cpu.orchestrated.push(
        (sum(after.map((entry) => entry.total)) - sum(before.map((entry) => entry.total))) / projects,
      );
      cpu.helpers.push(
        (sum(after.map((entry) => entry.helpers)) - sum(before.map((entry) => entry.helpers))) / projects,
      );
      return ms;
    },
  };
  /** @type {('xargs' | 'parallel')[]} */
  const peers = [];
  if (xargsVersion) peers.push('xargs');
  else console.error('xargs is not installed: the "xargs -P4" peer is SKIPPED');
  if (parallelVersion) peers.push('parallel');
  for (const tool of peers)
    variants[tool] = async () =>
      (await runShellPeer(tool, executable, packageDir, projects, TOTAL, peerEnv)).ms;
  // Warm-up: 4,000 calls of each Node variant, a few of the others. V8 compiles a worker's hot code
  // with its optimizing tiers over thousands of calls: after 1,000, its compiler still took 13 % of
  // the workers' CPU in the measured batch (bench/perf-worker.mjs), after 6,000 1 % (a worker that
  // has run for a while).
  for (let done = 0; done < WARM_CALLS; done += Math.min(projects, WARM_CALLS - done))
    await runBatch(install, 'native-fixture', ids.slice(0, Math.min(projects, WARM_CALLS - done)), {
      pollMs: 20,
    });
  await pool(WARM_CALLS, TOTAL, (index) => plugins.inspect('native-fixture', ids[index % projects]));
  await runMinimalHost(minimalHost, executable, packageDir, 40, TOTAL, pluginEnvironment());
  for (const tool of peers) await runShellPeer(tool, executable, packageDir, 40, TOTAL, peerEnv);

  const { times, loads } = await rotatedRounds(
    variants,
    rounds,
    (ms) => `${((projects / ms) * 1000).toFixed(0)} calls/s`,
  );

  const rate = (/** @type {string} */ name) => (projects / median(times[name])) * 1000;
  /** @type {Record<string, string>} */
  const describe = {
    minimal: `minimal host (C, posix_spawn, ${TOTAL} threads, no protocol checks)`,
    direct: `direct: core.plugins.inspect in-process, concurrency ${TOTAL}, no queue`,
    orchestrated: `orchestrated: createBatch → finished, ${WORKERS} worker processes × concurrency ${CONCURRENCY}`,
    xargs: `peer: xargs -P${TOTAL}, sh: printf piped into the executable, per project (${xargsVersion})`,
    parallel: `peer: parallel -j${TOTAL}, sh: printf piped into the executable, per project (${parallelVersion})`,
  };
  const rows = Object.keys(variants).map((name) => [
    describe[name],
    rate(name).toFixed(0),
    (rate(name) / rate('minimal')).toFixed(3),
    name in cpu ? median(cpu[/** @type {keyof typeof cpu} */ (name)]).toFixed(3) : '—',
    times[name].map((ms) => (ms / 1000).toFixed(2)).join(', '),
  ]);
  console.log(
    `Batch throughput, ${projects} projects, native-fixture (${note}; per round: ${loads.join(' / ')})\n`,
  );
  console.log(
    table(
      [
        'variant',
        'calls/s (median)',
        '÷ minimal',
        'host CPU ms/call (median)',
        `wall s per round (${rounds} rounds)`,
      ],
      rows,
    ),
  );
  const orchestrated = rate('orchestrated') / rate('minimal');
  const direct = rate('direct') / rate('minimal');
  const hostCpu = median(cpu.orchestrated) - median(cpu.minimal);
  const hostCpuRatio = hostCpu / median(cpu.minimal);
  console.log(
    `\norchestrated ÷ minimal: ${orchestrated.toFixed(3)} (target ≥ ${ORCHESTRATED_TARGET}) ${orchestrated >= ORCHESTRATED_TARGET ? 'MET' : 'NOT MET'}` +
      `\ndirect ÷ minimal: ${direct.toFixed(3)} (target ≥ ${DIRECT_TARGET}) ${direct >= DIRECT_TARGET ? 'MET' : 'NOT MET'}` +
      `\nhost CPU per call: workers ${median(cpu.orchestrated).toFixed(3)} ms (of which spawn helpers ${median(cpu.helpers).toFixed(3)}) − minimal host ${median(cpu.minimal).toFixed(3)} ms = ${hostCpu.toFixed(3)} ms = ${hostCpuRatio.toFixed(2)}× the minimal host's own (target ≤ ${HOST_CPU_TARGET_RATIO}×) ${hostCpuRatio <= HOST_CPU_TARGET_RATIO ? 'MET' : 'NOT MET'}` +
      `\norchestrated ÷ direct: ${(rate('orchestrated') / rate('direct')).toFixed(3)}` +
      `\nCPU per call elsewhere (medians): the plugin itself (minimal host's reaped children) ${median(cpu.plugin).toFixed(3)} ms; ` +
      `keepers + plugins under the helpers (serving keepers read live, reaped ones through the helpers) ${median(cpu.callTrees).toFixed(3)} ms; redis-server during the batch ${median(cpu.redis).toFixed(3)} ms` +
      peers
        .map(
          (tool) =>
            `\norchestrated ÷ ${tool} (peer, ${TOTAL} at a time): ${(rate('orchestrated') / rate(tool)).toFixed(2)}× ` +
            `(${rate('orchestrated').toFixed(0)} vs ${rate(tool).toFixed(0)} calls/s; every one of its ${projects} calls per round answered with its result)`,
        )
        .join('') +
      (parallelVersion
        ? ''
        : '\nparallel -j4 peer: SKIPPED, GNU parallel is not installed (no parallel on PATH, or not the GNU one; apt-get install -y parallel)'),
  );
  for (const worker of workers) await worker.stop();
} finally {
  await cleanup();
}
