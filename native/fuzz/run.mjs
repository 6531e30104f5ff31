// Fuzzes the helper's C that reads bytes it did not write (native/fuzz/README.md): each
// `<target>_fuzz.c` here is built with clang's libFuzzer, AddressSanitizer and
// UndefinedBehaviorSanitizer, warnings as errors; it first replays every crash ever found
// (crashes/<target>/) and its corpus (corpus/<target>/), then fuzzes for a bounded time.
// A crash fails the run and prints the input to keep under crashes/<target>/ (a test from then on).
//
//   node native/fuzz/run.mjs [--seconds 60] [--merge]
//
// --merge adds the inputs that found new coverage to the repository's corpus (minimized).
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const here = dirname(fileURLToPath(import.meta.url));
const USAGE = 'usage: node native/fuzz/run.mjs [--seconds 60] [--merge]';
let values;
try {
  ({ values } = parseArgs({
    options: { seconds: { type: 'string', default: '60' }, merge: { type: 'boolean', default: false } },
  }));
} catch (error) {
  console.error(`${error.message}\n${USAGE}`);
  process.exit(2);
}
const seconds = Number(values.seconds);
if (!Number.isInteger(seconds) || seconds < 1) {
  console.error(`--seconds must be a whole number of seconds ≥ 1, not "${values.seconds}"`);
  process.exit(2);
}
const compiler = process.env.FUZZ_CC ?? 'clang';
const FLAGS = ['-g', '-O1', '-std=gnu11', '-Wall', '-Wextra', '-Werror'];
const SANITIZERS = ['-fsanitize=fuzzer,address,undefined', '-fno-sanitize-recover=undefined'];

const files = (dir) => {
  try {
    return readdirSync(dir).map((name) => join(dir, name));
  } catch {
    return [];
  }
};

const work = mkdtempSync(join(tmpdir(), 'switchyard-fuzz-'));
process.on('exit', () => rmSync(work, { recursive: true, force: true }));
let failed = false;
for (const source of readdirSync(here).filter((name) => name.endsWith('_fuzz.c'))) {
  const target = source.slice(0, -'_fuzz.c'.length);
  const binary = join(work, target);
  const built = spawnSync(
    compiler,
    [...FLAGS, ...SANITIZERS, '-o', binary, join(here, source), join(here, '..', `${target}.c`)],
    { encoding: 'utf8' },
  );
  if (built.error || built.status !== 0) {
    console.error(
      built.error?.code === 'ENOENT'
        ? `${compiler} not found: fuzzing needs clang with libFuzzer (apt-get install clang), or FUZZ_CC naming one`
        : `${target}: the build failed:\n${built.stderr}`,
    );
    process.exit(2);
  }
  const seeds = join(here, 'corpus', target);
  const known = [...files(join(here, 'crashes', target)), ...files(seeds)];
  const replay = spawnSync(binary, known, { encoding: 'utf8' });
  if (replay.status !== 0) {
    console.error(
      `${target}: a known input fails again:\n${replay.stderr.split('\n').slice(-30).join('\n')}`,
    );
    failed = true;
    continue;
  }
  const corpus = join(work, `${target}-corpus`);
  const artifacts = join(work, `${target}-artifacts`);
  mkdirSync(corpus);
  mkdirSync(artifacts);
  const run = spawnSync(
    binary,
    [
      `-max_total_time=${seconds}`,
      '-max_len=70000',
      '-timeout=10',
      '-rss_limit_mb=1024',
      `-artifact_prefix=${artifacts}/`,
      corpus,
      seeds,
    ],
    { encoding: 'utf8', maxBuffer: 64 << 20 },
  );
  const done = run.stderr.match(/Done (\d+) runs in (\d+) second/);
  const coverage = [...run.stderr.matchAll(/cov: (\d+) ft: (\d+)/g)].at(-1);
  const found = files(artifacts);
  if (run.status !== 0 || found.length > 0) {
    failed = true;
    console.error(`${target}: FAILED after fuzzing:\n${run.stderr.split('\n').slice(-40).join('\n')}`);
    for (const crash of found) {
      console.error(
        `${target}: the input is ${crash} (base64 ${readFileSync(crash).toString('base64').slice(0, 400)}); ` +
          `keep it as native/fuzz/crashes/${target}/<what it shows>, fix the C, and it is a test from then on`,
      );
      const kept = join(
        process.env.FUZZ_ARTIFACTS ?? join(here, '..', '..', 'test-artifacts', 'fuzz'),
        target,
      );
      mkdirSync(kept, { recursive: true });
      copyFileSync(crash, join(kept, basename(crash)));
      console.error(`${target}: copied to ${join(kept, basename(crash))}`);
    }
    continue;
  }
  console.log(
    `${target}: ${known.length} known inputs pass; ${done?.[1] ?? '?'} runs in ${done?.[2] ?? seconds} s, ` +
      `coverage ${coverage?.[1] ?? '?'} edges, ${coverage?.[2] ?? '?'} features, no crash`,
  );
  if (values.merge) {
    const merged = spawnSync(binary, ['-merge=1', seeds, corpus], { encoding: 'utf8' });
    if (merged.status !== 0) {
      console.error(`${target}: merging the corpus failed:\n${merged.stderr}`);
      failed = true;
    } else console.log(`${target}: corpus now ${files(seeds).length} inputs`);
  }
}
process.exit(failed ? 1 : 0);
