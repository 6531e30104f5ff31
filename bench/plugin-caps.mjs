// A plugin's installation-wide caps held (`plugin set --max-concurrency 2
// --rate 20/s`, src/core/plugins/plugin-caps.ts): a host with its own
// redis-server and two real worker processes of 4 slots each runs one batch
// of the queue-plugin fixture, which records each call's pid and [start, end]
// (its spans.log). From what the plugin itself saw: the most calls open at
// one instant (by pid), the most starts within any 1 s, and the mean rate.
//
// A second phase sets the rate alone, low enough that this machine's calls
// exceed it, so the rate cap is seen binding too.
//
//   node bench/plugin-caps.mjs [projects=200] [max-concurrency=2] [rate per s=20] [call ms=50] [rate alone=5]
import { copyFile, chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as lib from './lib.mjs';

const projects = Number(process.argv[2] ?? 200);
const most = Number(process.argv[3] ?? 2);
const rate = Number(process.argv[4] ?? 20);
const callMs = Number(process.argv[5] ?? 50);
const rateOnly = Number(process.argv[6] ?? 5);
const WORKERS = 2;
const CONCURRENCY = 4;
const PLUGIN = 'queue-plugin';
const FIXTURE = join(lib.REPO, 'test', 'fixtures', 'queue-plugin.mjs');

/** @param {string} packageDir */
async function spansOf(packageDir) {
  return (await readFile(join(packageDir, 'spans.log'), 'utf8'))
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [, pid, worker, start, end] = line.split(' ');
      return { pid: Number(pid), worker: Number(worker), start: Number(start), end: Number(end) };
    });
}

/** Calls open at once, by pid: +1 at each start, -1 at each end (an end first at the same ms). @param {{ start: number, end: number }[]} spans */
function mostAtOnce(spans) {
  const edges = spans
    .flatMap((span) => [
      { at: span.start, step: 1 },
      { at: span.end, step: -1 },
    ])
    .sort((a, b) => a.at - b.at || a.step - b.step);
  let open = 0;
  let most = 0;
  for (const edge of edges) most = Math.max(most, (open += edge.step));
  return most;
}

/** The most of the sorted `starts` within any `windowMs`. @param {number[]} starts @param {number} windowMs */
function mostWithin(starts, windowMs) {
  let most = 0;
  for (let first = 0, last = 0; last < starts.length; last += 1) {
    while ((starts[last] ?? 0) - (starts[first] ?? 0) >= windowMs) first += 1;
    most = Math.max(most, last - first + 1);
  }
  return most;
}

process.once('SIGINT', () => void lib.cleanup().then(() => process.exit(130)));

try {
  const note = await lib.machineNote();
  const redis = await lib.startRedis();
  const empty = await mkdtemp(join(tmpdir(), 'switchyard-bench-caps-'));
  lib.onCleanup(() => rm(empty, { recursive: true, force: true }));
  const install = await lib.makeInstallation(redis.url, [
    {
      name: PLUGIN,
      from: empty,
      id: PLUGIN,
      // Enabled below, once it may write its records (enabling runs a health call).
      enable: false,
      // The fixture as its own package: its executable and a plugin.json naming it.
      prepare: async (dir) => {
        await writeFile(
          join(dir, 'plugin.json'),
          JSON.stringify({
            schemaVersion: 'switchyard.plugin-manifest/v1',
            id: PLUGIN,
            name: 'Queue fixture',
            version: '1.0.0',
            protocolVersion: 'switchyard.plugin/v1',
            executable: 'queue-plugin.mjs',
            arguments: [],
            capabilities: ['project.inspect'],
            requestedScopes: ['project.metadata.read', 'project.files.read'],
          }),
        );
        await copyFile(FIXTURE, join(dir, 'queue-plugin.mjs'));
        await chmod(join(dir, 'queue-plugin.mjs'), 0o755);
        await writeFile(join(dir, 'record-spans'), '');
        await writeFile(join(dir, 'inspect-sleep-ms'), `${callMs}\n`);
      },
    },
  ]);
  const { runtime } = install;
  const packageDir = /** @type {string} */ (install.dirs[PLUGIN]);
  // The fixture reads /proc to name the worker that started it, and writes its records in its package.
  await runtime.plugins.setPolicy(PLUGIN, { allowRead: ['/proc'], allowWrite: [packageDir] }, lib.ACTOR);
  await lib.trustAndEnable(runtime, PLUGIN, ['project.metadata.read', 'project.files.read']);
  const ids = await lib.addProjects(install, projects);
  for (let index = 0; index < WORKERS; index++) await lib.startWorker(install, redis.url, CONCURRENCY);
  console.log(
    `plugin caps: ${projects} inspections per phase, ${WORKERS} workers × ${CONCURRENCY} slots, ${callMs} ms per call`,
  );
  console.log(note);
  // Phase 1: both caps as set. Phase 2: the rate alone, at a rate the machine can exceed, so it binds.
  const phases = [
    { name: `--max-concurrency ${most} --rate ${rate}/s`, most, rate },
    { name: `--rate ${rateOnly}/s alone`, most: undefined, rate: rateOnly },
  ];
  let ok = true;
  for (const phase of phases) {
    await runtime.plugins.setPolicy(
      PLUGIN,
      { maxConcurrency: phase.most ?? null, rate: `${phase.rate}/s` },
      lib.ACTOR,
    );
    await writeFile(join(packageDir, 'spans.log'), '');
    const { batch, ms } = await lib.runBatch(install, PLUGIN, ids, { pollMs: 100 });
    const seen = await spansOf(packageDir);
    const atOnce = mostAtOnce(seen);
    const starts = seen.map((entry) => entry.start).sort((x, y) => x - y);
    const inOneSecond = mostWithin(starts, 1_000);
    const span = ((starts.at(-1) ?? 0) - (starts[0] ?? 0)) / 1_000;
    const meanRate = span > 0 ? (starts.length - 1) / span : NaN;
    // The mean is what the cap decides (admissions on Redis' clock); the busiest second is what the
    // plugin saw, later by each call's spawn time, which a loaded machine spreads unevenly.
    const within = meanRate <= phase.rate * 1.1;
    const binding = meanRate >= phase.rate * 0.8;
    console.log(`\nphase ${phase.name}:`);
    console.log(
      `batch ${batch.state}: ${batch.succeeded} succeeded, ${batch.failed} failed in ${(ms / 1_000).toFixed(1)} s; ` +
        `${seen.length} calls by ${new Set(seen.map((entry) => entry.pid)).size} plugin pids on ` +
        `${new Set(seen.map((entry) => entry.worker)).size} workers`,
    );
    console.log(`most at once: ${atOnce} (cap ${phase.most ?? 'none'})`);
    console.log(
      `rate: ${meanRate.toFixed(1)}/s (cap ${phase.rate}, within 10 %: ${within ? 'yes' : 'no'}` +
        `${binding ? '' : '; the cap did not bind: calls were slower than it'}); ` +
        `${inOneSecond} plugin starts in the busiest 1 s`,
    );
    if (batch.failed > 0 || (phase.most !== undefined && atOnce > phase.most) || !within) ok = false;
  }
  if (!ok) process.exitCode = 1;
} finally {
  await lib.cleanup();
}
