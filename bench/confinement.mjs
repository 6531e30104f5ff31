// The cost of per-call confinement (Landlock signal scoping, applied in the
// keeper between clone and exec) measured against SWITCHYARD_CONFINEMENT=off in
// one run: sequential plugin.health calls of the native fixture through the
// supervisor, in alternating rounds of each mode so both see the same machine.
// Per mode: calls/s, this process's CPU per call (process.cpuUsage, µs), the
// spawn helper's own CPU per call and the reaped call trees' (keepers and
// plugins, /proc cutime) — the last two in 10 ms clock ticks, so over many calls.
//
//   node bench/confinement.mjs [calls per mode=600] [round=50]
import { mkdtemp, rm, cp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { superviseCall } from '../dist/core/supervision/index.js';
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
  const call = () =>
    superviseCall({
      executablePath: join(packageDir, manifest.executable),
      arguments: [],
      packageDir,
      identity: manifest,
      grants: ['project.metadata.read'],
      method: 'plugin.health',
      params: {},
    });
  await call(); // starts the helper
  const [helper] = await childrenNamed(process.pid, 'sy-spawner');
  if (!helper) throw new Error('no sy-spawner helper: build it first (npm run build)');

  const modes = { on: emptyTotals(), off: emptyTotals() };
  for (let done = 0; done < total; done += round) {
    for (const mode of /** @type {const} */ (['on', 'off'])) {
      if (mode === 'off') process.env.SWITCHYARD_CONFINEMENT = 'off';
      else delete process.env.SWITCHYARD_CONFINEMENT;
      const before = await snapshot(helper);
      for (let index = 0; index < round; index += 1) await call();
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
    mode === 'on' ? 'confined (signal scoping)' : 'SWITCHYARD_CONFINEMENT=off',
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
  const on = modes.on;
  const off = modes.off;
  const delta = (on.wallMs / on.calls - off.wallMs / off.calls).toFixed(3);
  const cpuDelta = ((on.hostUs / on.calls - off.hostUs / off.calls) / 1000).toFixed(3);
  console.log(`confinement costs ${delta} ms wall and ${cpuDelta} ms host-process CPU per call`);
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
