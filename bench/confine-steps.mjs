// Builds bench/confine-steps.c against native/confine.c and runs it: the CPU
// each kernel step of per-call confinement adds to a process's fork and exit
// (no exec, no plugin), in alternating rounds.
//
//   node bench/confine-steps.mjs [forks per variant=4000]
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { machineNote } from './lib.mjs';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const dir = mkdtempSync(join(tmpdir(), 'switchyard-confine-steps-'));
try {
  const binary = join(dir, 'confine-steps');
  execFileSync(process.env.CC ?? 'cc', [
    '-O2',
    '-I',
    join(root, 'native'),
    '-o',
    binary,
    join(root, 'bench', 'confine-steps.c'),
    join(root, 'native', 'confine.c'),
  ]);
  console.log(await machineNote());
  process.stdout.write(execFileSync(binary, [process.argv[2] ?? '4000'], { encoding: 'utf8' }));
} finally {
  rmSync(dir, { recursive: true, force: true });
}
