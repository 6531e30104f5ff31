// The cost of per-call confinement measured in one run, four modes in
// alternating rounds so all see the same machine: `full` (Landlock file, TCP
// and signal rules, seccomp, rlimits and the limits' cgroups, the call's own
// IPC and mount namespaces with its TMPDIR a tmpfs of its disk budget: what a
// plugin call gets by default), `no-namespaces` (the same with
// SWITCHYARD_CALL_NAMESPACES=off: the cost of the namespaces is full minus
// this), `signals` (signal scoping only, no policy) and
// SWITCHYARD_CONFINEMENT=off; sequential plugin.health calls of
// the native fixture through the supervisor (no Redis), started from a
// descriptor as the worker does.
// Per mode: calls/s, this process's CPU per call (process.cpuUsage, µs) and,
// where this process may make a cgroup v1 cpuacct group (root), the CPU of all
// the processes together to the nanosecond (cpuacct.usage of a group the bench
// moves into before it starts the helpers: keepers and plugins inherit it).
// Without it there is no figure for the helpers and keepers: there is one helper
// per kind of call, and serving keepers are never reaped, so /proc ticks cannot
// count them.
//
//   node bench/confinement.mjs [calls per mode=600] [round=50]
import { mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { superviseCall } from '../dist/core/supervision/index.js';
import { DEFAULT_RESOURCE_LIMITS } from '../dist/core/plugins/index.js';
import { childrenNamed, healthCaller, machineNote, table } from './lib.mjs';

/** @type {string | undefined} */
let cpuacctUsage;
/** Full confinement's CPU over none, as a share of a confined call's CPU (docs/adr/0008). */
const CONFINEMENT_SHARE_TARGET = 0.05;
const total = Number(process.argv[2] ?? 600);
const round = Number(process.argv[3] ?? 50);
const dir = await mkdtemp(join(tmpdir(), 'switchyard-bench-confine-'));
try {
  const health = await healthCaller(dir, { superviseCall, limits: DEFAULT_RESOURCE_LIMITS });
  /** @param {'full' | 'no-namespaces' | 'signals' | 'off'} mode */
  const call = (mode = 'full') => health(mode !== 'signals');
  const cpuacct = ownCpuacctGroup();
  cpuacctUsage = cpuacct;
  await call(); // starts the helper
  const [helper] = await childrenNamed(process.pid, 'sy-spawner');
  if (!helper) throw new Error('no sy-spawner helper: build it first (npm run build)');

  const modes = {
    full: emptyTotals(),
    'no-namespaces': emptyTotals(),
    signals: emptyTotals(),
    off: emptyTotals(),
  };
  for (let done = 0; done < total; done += round) {
    for (const mode of /** @type {const} */ (['full', 'no-namespaces', 'signals', 'off'])) {
      if (mode === 'off') process.env.SWITCHYARD_CONFINEMENT = 'off';
      else delete process.env.SWITCHYARD_CONFINEMENT;
      if (mode === 'no-namespaces') process.env.SWITCHYARD_CALL_NAMESPACES = 'off';
      else delete process.env.SWITCHYARD_CALL_NAMESPACES;
      const before = snapshot();
      for (let index = 0; index < round; index += 1) await call(mode);
      const after = snapshot();
      const totals = modes[mode];
      totals.calls += round;
      totals.wallMs += after.wall - before.wall;
      totals.hostUs += after.hostUs - before.hostUs;
      totals.allNs += after.allNs - before.allNs;
      totals.rounds.push({
        wallMs: (after.wall - before.wall) / round,
        cpuMs: (after.allNs - before.allNs) / 1e6 / round,
      });
    }
  }
  delete process.env.SWITCHYARD_CONFINEMENT;
  delete process.env.SWITCHYARD_CALL_NAMESPACES;

  console.log(`${await machineNote()}; ${total} calls per mode in rounds of ${round}`);
  const rows = Object.entries(modes).map(([mode, t]) => [
    {
      full: 'confined (files, network, signals, seccomp, limits, namespaces + tmpfs)',
      'no-namespaces': 'confined, SWITCHYARD_CALL_NAMESPACES=off',
      signals: 'signal scoping only',
      off: 'SWITCHYARD_CONFINEMENT=off',
    }[mode],
    (t.calls / (t.wallMs / 1000)).toFixed(0),
    (t.wallMs / t.calls).toFixed(3),
    (t.hostUs / t.calls / 1000).toFixed(3),
    cpuacct ? (t.allNs / t.calls / 1e6).toFixed(3) : 'n/a',
  ]);
  console.log(
    table(['mode', 'calls/s', 'wall ms/call', 'host process CPU ms/call', 'all CPU ms/call (cpuacct)'], rows),
  );
  const perCall = (/** @type {ReturnType<typeof emptyTotals>} */ t) => ({
    wall: t.wallMs / t.calls,
    cpu: cpuacct ? t.allNs / 1e6 / t.calls : undefined,
  });
  const [full, off] = [perCall(modes.full), perCall(modes.off)];
  console.log(
    `full confinement costs ${(full.wall - off.wall).toFixed(3)} ms wall and ` +
      `${full.cpu === undefined || off.cpu === undefined ? 'n/a (no cpuacct group: run as root)' : (full.cpu - off.cpu).toFixed(3)} ms CPU (every process, cpuacct) per call; ` +
      `calls/s ratio full/off ${(off.wall / full.wall).toFixed(2)}`,
  );
  if (cpuacct) {
    // Each full round against the off round next to it: load that shifts between rounds cancels out.
    /** @param {ReturnType<typeof emptyTotals>} over @param {ReturnType<typeof emptyTotals>} under */
    const paired = (over, under) =>
      over.rounds.map((f, index) => ({
        wall: f.wallMs - under.rounds[index].wallMs,
        cpu: f.cpuMs - under.rounds[index].cpuMs,
      }));
    const pairs = paired(modes.full, modes.off);
    const median = (/** @type {number[]} */ values) => {
      const sorted = [...values].sort((a, b) => a - b);
      return sorted[Math.floor(sorted.length / 2)];
    };
    const quartiles = (/** @type {number[]} */ values) => {
      const sorted = [...values].sort((a, b) => a - b);
      return `${sorted[Math.floor(sorted.length / 4)].toFixed(3)}…${sorted[Math.floor((sorted.length * 3) / 4)].toFixed(3)}`;
    };
    const cpus = pairs.map((pair) => pair.cpu);
    const walls = pairs.map((pair) => pair.wall);
    console.log(
      `paired rounds (${pairs.length}): median cost of full over off ${median(cpus).toFixed(3)} ms CPU ` +
        `(quartiles ${quartiles(cpus)}), ${median(walls).toFixed(3)} ms wall (quartiles ${quartiles(walls)}) per call`,
    );
    // The target is a share of a whole confined call's CPU (every process), so it holds on any machine.
    const share = median(cpus) / (full.cpu ?? NaN);
    console.log(
      `confinement's share of a call's CPU: ${(share * 100).toFixed(1)} % of ${full.cpu?.toFixed(3)} ms ` +
        `(target ≤ ${CONFINEMENT_SHARE_TARGET * 100} %) ${share <= CONFINEMENT_SHARE_TARGET ? 'MET' : 'NOT MET'}`,
    );
    // The namespaces alone (clone with CLONE_NEWIPC | CLONE_NEWNS, the tmpfs made, mounted and
    // torn down with the call): full against the no-namespaces round just before it.
    const isolation = paired(modes.full, modes['no-namespaces']);
    const isolationCpu = isolation.map((pair) => pair.cpu);
    const isolationWall = isolation.map((pair) => pair.wall);
    console.log(
      `paired rounds (${isolation.length}): median cost of the per-call namespaces and tmpfs ` +
        `${median(isolationCpu).toFixed(3)} ms CPU (quartiles ${quartiles(isolationCpu)}), ` +
        `${median(isolationWall).toFixed(3)} ms wall (quartiles ${quartiles(isolationWall)}) per call`,
    );
  }
} finally {
  await rm(dir, { recursive: true, force: true });
}

function emptyTotals() {
  return {
    calls: 0,
    wallMs: 0,
    hostUs: 0,
    allNs: 0,
    /** @type {{ wallMs: number; cpuMs: number }[]} */
    rounds: [],
  };
}

/** A cpuacct group of this process alone (and what it starts), or undefined where it cannot make one. */
function ownCpuacctGroup() {
  const root = '/sys/fs/cgroup/cpuacct';
  const group = join(root, `switchyard-bench-${process.pid}`);
  try {
    mkdirSync(group);
    writeFileSync(join(group, 'cgroup.procs'), String(process.pid));
  } catch {
    return undefined;
  }
  process.once('exit', () => {
    try {
      writeFileSync(join(root, 'cgroup.procs'), String(process.pid));
      rmdirSync(group);
    } catch {
      // the helper may still be in it for a moment; the group is empty and harmless
    }
  });
  return join(group, 'cpuacct.usage');
}

function snapshot() {
  const usage = process.cpuUsage();
  return {
    wall: performance.now(),
    hostUs: usage.user + usage.system,
    allNs: cpuacctUsage ? Number(readFileSync(cpuacctUsage, 'utf8')) : 0,
  };
}
