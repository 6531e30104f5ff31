// The cost of per-call confinement measured in one run, three modes in
// alternating rounds so all see the same machine: `full` (Landlock file, TCP
// and signal rules, seccomp, rlimits and the limits' cgroups, the scratch
// TMPDIR: what a plugin call gets by default), `signals` (signal scoping only,
// no policy) and SWITCHYARD_CONFINEMENT=off; sequential plugin.health calls of
// the native fixture through the supervisor (no Redis), started from a
// descriptor as the worker does.
// Per mode: calls/s, this process's CPU per call (process.cpuUsage, µs), the
// spawn helper's own CPU per call and the reaped call trees' (keepers and
// plugins, /proc cutime) — the last two in 10 ms clock ticks, so over many calls.
//
//   node bench/confinement.mjs [calls per mode=600] [round=50]
import { closeSync, openSync } from 'node:fs';
import { mkdtemp, rm, cp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { superviseCall } from '../dist/core/supervision/index.js';
import { DEFAULT_RESOURCE_LIMITS } from '../dist/core/plugins/index.js';
import {
  NATIVE_FIXTURE_DIST,
  childrenNamed,
  machineNote,
  processCpuMs,
  reapedChildrenCpuMs,
  table,
} from './lib.mjs';

const total = Number(process.argv[2] ?? 600);
const round = Number(process.argv[3] ?? 50);
const dir = await mkdtemp(join(tmpdir(), 'switchyard-bench-confine-'));
try {
  const packageDir = join(dir, 'native-fixture');
  await cp(NATIVE_FIXTURE_DIST, packageDir, { recursive: true });
  const manifest = JSON.parse(await readFile(join(packageDir, 'plugin.json'), 'utf8'));
  const executablePath = join(packageDir, manifest.executable);
  const policy = {
    network: /** @type {const} */ ('none'),
    allowRead: [],
    allowWrite: [],
    limits: DEFAULT_RESOURCE_LIMITS,
  };
  /** @param {'full' | 'signals' | 'off'} mode */
  const call = async (mode = 'full') => {
    const executableFd = openSync(executablePath, 'r');
    try {
      return await superviseCall({
        executablePath,
        executableFd,
        arguments: [],
        packageDir,
        identity: manifest,
        grants: ['project.metadata.read'],
        method: 'plugin.health',
        params: {},
        ...(mode === 'signals' ? {} : { policy }),
      });
    } finally {
      closeSync(executableFd);
    }
  };
  await call(); // starts the helper
  const [helper] = await childrenNamed(process.pid, 'sy-spawner');
  if (!helper) throw new Error('no sy-spawner helper: build it first (npm run build)');

  const modes = { full: emptyTotals(), signals: emptyTotals(), off: emptyTotals() };
  for (let done = 0; done < total; done += round) {
    for (const mode of /** @type {const} */ (['full', 'signals', 'off'])) {
      if (mode === 'off') process.env.SWITCHYARD_CONFINEMENT = 'off';
      else delete process.env.SWITCHYARD_CONFINEMENT;
      const before = await snapshot(helper);
      for (let index = 0; index < round; index += 1) await call(mode);
      const after = await snapshot(helper);
      const totals = modes[mode];
      totals.calls += round;
      totals.wallMs += after.wall - before.wall;
      totals.hostUs += after.hostUs - before.hostUs;
      totals.helperMs += after.helperMs - before.helperMs;
      totals.treesMs += after.treesMs - before.treesMs;
    }
  }
  delete process.env.SWITCHYARD_CONFINEMENT;

  console.log(`${await machineNote()}; ${total} calls per mode in rounds of ${round}`);
  const rows = Object.entries(modes).map(([mode, t]) => [
    {
      full: 'confined (files, network, signals, seccomp, limits)',
      signals: 'signal scoping only',
      off: 'SWITCHYARD_CONFINEMENT=off',
    }[mode],
    (t.calls / (t.wallMs / 1000)).toFixed(0),
    (t.wallMs / t.calls).toFixed(3),
    (t.hostUs / t.calls / 1000).toFixed(3),
    (t.helperMs / t.calls).toFixed(3),
    (t.treesMs / t.calls).toFixed(3),
  ]);
  console.log(
    table(
      [
        'mode',
        'calls/s',
        'wall ms/call',
        'host process CPU ms/call',
        'helper CPU ms/call',
        'keeper+plugin CPU ms/call',
      ],
      rows,
    ),
  );
  const perCall = (/** @type {ReturnType<typeof emptyTotals>} */ t) => ({
    wall: t.wallMs / t.calls,
    cpu: (t.hostUs / 1000 + t.helperMs + t.treesMs) / t.calls,
  });
  const [full, off] = [perCall(modes.full), perCall(modes.off)];
  console.log(
    `full confinement costs ${(full.wall - off.wall).toFixed(3)} ms wall and ` +
      `${(full.cpu - off.cpu).toFixed(3)} ms CPU (host process + helper + keeper and plugin) per call; ` +
      `calls/s ratio full/off ${(off.wall / full.wall).toFixed(2)}`,
  );
} finally {
  await rm(dir, { recursive: true, force: true });
}

function emptyTotals() {
  return { calls: 0, wallMs: 0, hostUs: 0, helperMs: 0, treesMs: 0 };
}

/** @param {number} helper the spawn helper's pid */
async function snapshot(helper) {
  const usage = process.cpuUsage();
  return {
    wall: performance.now(),
    hostUs: usage.user + usage.system,
    helperMs: (await processCpuMs(helper)) ?? 0,
    treesMs: (await reapedChildrenCpuMs(helper)) ?? 0,
  };
}
