// The system calls per plugin call that confinement adds, counted (strace -f -c),
// not timed: on a loaded machine the CPU of a 50 µs difference drowns in the
// noise of a call that costs milliseconds, while the count of what each call
// does is exact. Sequential plugin.health calls of the native fixture through
// the supervisor (as bench/confinement.mjs), full confinement and
// SWITCHYARD_CONFINEMENT=off, each mode in its own run under strace; every
// process of the run is counted (host, helper, keepers, plugins).
//
//   node bench/confine-syscalls.mjs [calls per mode=300]
// Needs strace.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { healthCaller, machineNote, table } from './lib.mjs';

const WATCHED = [
  'rt_sigaction',
  'prctl',
  'capget',
  'capset',
  'prlimit64',
  'landlock_restrict_self',
  'landlock_add_rule',
  'pread64',
  'readlink',
];

if (process.argv[2] === '--drive') {
  await drive(process.argv[3] === 'off', Number(process.argv[4]));
} else {
  const calls = Number(process.argv[2] ?? 300);
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-confine-syscalls-'));
  try {
    /** @type {Record<string, Map<string, number>>} */
    const counts = {};
    for (const mode of ['full', 'off']) {
      const output = join(dir, `${mode}.txt`);
      execFileSync(
        'strace',
        [
          '-f',
          '-c',
          '-o',
          output,
          process.execPath,
          fileURLToPath(import.meta.url),
          '--drive',
          mode,
          String(calls),
        ],
        { stdio: 'ignore' },
      );
      counts[mode] = summary(readFileSync(output, 'utf8'));
    }
    console.log(
      `${await machineNote()}; ${calls} calls per mode (and one first call that starts the helper)`,
    );
    const per = (/** @type {string} */ mode, /** @type {string} */ name) =>
      (counts[mode].get(name) ?? 0) / calls;
    const rows = [...WATCHED, 'total'].map((name) => [
      name,
      per('full', name).toFixed(2),
      per('off', name).toFixed(2),
      (per('full', name) - per('off', name)).toFixed(2),
    ]);
    console.log(table(['system call', 'confined, per call', 'off, per call', 'confinement adds'], rows));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * strace -c's table: calls per system call name, and the total.
 * @param {string} text
 */
function summary(text) {
  const counts = new Map();
  for (const line of text.split('\n')) {
    const fields = line.trim().split(/\s+/);
    // % time, seconds, usecs/call, calls, [errors], syscall
    if (fields.length < 5 || !/^\d+$/.test(fields[3] ?? '')) continue;
    counts.set(fields[fields.length - 1], Number(fields[3]));
  }
  return counts;
}

/**
 * The calls themselves, in the process strace follows.
 * @param {boolean} off
 * @param {number} calls
 */
async function drive(off, calls) {
  const { superviseCall } = await import('../dist/core/supervision/index.js');
  const { DEFAULT_RESOURCE_LIMITS } = await import('../dist/core/plugins/index.js');
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-confine-syscalls-drive-'));
  try {
    const health = await healthCaller(dir, { superviseCall, limits: DEFAULT_RESOURCE_LIMITS });
    if (off) process.env.SWITCHYARD_CONFINEMENT = 'off';
    for (let index = 0; index <= calls; index++) await health();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
