// The fuzz targets of the helper's C that reads bytes it did not write (native/fuzz/): every
// crash the fuzzer ever found (crashes/<target>/) and the corpus (corpus/<target>/) replayed
// under AddressSanitizer and UndefinedBehaviorSanitizer, without libFuzzer, so each crash is a
// regression test in every run. clang where there is one (CI installs it; its UBSan also sees
// NULL + 0, gcc's does not), else cc, said once. The fuzzing itself runs in CI: native/fuzz/run.mjs.
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO } from '../../support/data-dir.js';

const run = promisify(execFile);
const FUZZ = join(REPO, 'native', 'fuzz');
const FLAGS = ['-g', '-O1', '-std=gnu11', '-Wall', '-Wextra', '-Werror'];
const SANITIZERS = ['-fsanitize=address,undefined', '-fno-sanitize-recover=all'];

async function inputs(dir: string): Promise<string[]> {
  return (await readdir(dir).catch(() => [])).map((name) => join(dir, name));
}

/** Exit code and output of the replay binary over `files`. */
async function replay(binary: string, files: string[]): Promise<{ code: number; out: string; err: string }> {
  try {
    const { stdout, stderr } = await run(binary, files, { maxBuffer: 16 << 20 });
    return { code: 0, out: stdout, err: stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, out: failed.stdout, err: failed.stderr };
  }
}

const hasClang = await run('clang', ['--version']).then(
  () => true,
  () => false,
);
const compiler = hasClang ? 'clang' : (process.env.CC ?? 'cc');
const targets = (await readdir(FUZZ))
  .filter((name) => name.endsWith('_fuzz.c'))
  .map((name) => name.slice(0, -7));

describe('the fuzz targets of the helper’s C', () => {
  let work: string;
  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), 'switchyard-fuzz-replay-'));
    if (!hasClang)
      console.warn(`no clang: the replay is built with ${compiler} (its UBSan does not see NULL + 0)`);
  });
  afterAll(() => rm(work, { recursive: true, force: true }));

  async function build(target: string, source = join(REPO, 'native', `${target}.c`)): Promise<string> {
    const binary = join(work, `${target}-${Math.random().toString(36).slice(2)}`);
    await run(compiler, [
      ...FLAGS,
      ...SANITIZERS,
      `-I${join(REPO, 'native')}`,
      '-o',
      binary,
      join(FUZZ, 'replay.c'),
      join(FUZZ, `${target}_fuzz.c`),
      source,
    ]);
    return binary;
  }

  it('every parser of foreign bytes has a target with a corpus', async () => {
    expect(targets.sort()).toEqual(['frames', 'streams']);
    for (const target of targets)
      expect((await inputs(join(FUZZ, 'corpus', target))).length).toBeGreaterThan(1);
  });

  it.each(targets)(
    '%s: every crash found and the whole corpus run clean under ASan and UBSan',
    async (target) => {
      const files = [
        ...(await inputs(join(FUZZ, 'crashes', target))),
        ...(await inputs(join(FUZZ, 'corpus', target))),
      ];
      const result = await replay(await build(target), files);
      expect(result.code, result.err.slice(-2000)).toBe(0);
      expect(result.out.split('\n').filter((line) => line.startsWith('ran ')).length).toBe(files.length);
    },
    120_000,
  );

  it.skipIf(!hasClang)(
    'the crash the fuzzer found fails on the code it was found in',
    async () => {
      // streams.c as it was: the tail's whole lines taken from a tail without a buffer (NULL + 0).
      const fixed = await readFile(join(REPO, 'native', 'streams.c'), 'utf8');
      const guard = '  if (!tail->len) return 0;';
      expect(fixed).toContain(guard);
      const before = join(work, 'streams-before.c');
      await writeFile(
        before,
        fixed
          .split('\n')
          .filter((line) => !line.startsWith(guard))
          .join('\n')
          .replace('  if (dropped > tail->len) {', '  if (tail->len && dropped > tail->len) {'),
      );
      const result = await replay(
        await build('streams', before),
        await inputs(join(FUZZ, 'crashes', 'streams')),
      );
      expect(result.code).not.toBe(0);
      expect(result.err).toMatch(/null pointer/);
    },
    120_000,
  );
});
