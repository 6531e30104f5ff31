// The conformance kit judges package files as the host does (PROTOCOL §3):
// foreign owners refused with the owner and the fix; a FIFO plugin.json
// refused at once instead of hanging the kit.
import { execFileSync } from 'node:child_process';
import { constants } from 'node:fs';
import { chown, cp, mkdtemp, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runConformance } from '../src/conformance/run.js';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const nativeDist = join(repo, 'examples', 'plugins', 'native-fixture', 'dist');
const OTHER_UID = 12345;
const RUNS_AS_ROOT = process.getuid?.() === 0;
if (!RUNS_AS_ROOT)
  console.warn('sdk/test/package-files.test.ts: ownership cases need root to chown (skipped)');

let workDir: string;
beforeAll(async () => {
  workDir = await mkdtemp(join(tmpdir(), 'sdk-package-files-'));
});
afterAll(async () => rm(workDir, { recursive: true, force: true }));

async function copyOfNative(name: string): Promise<string> {
  const dir = join(workDir, name);
  await cp(nativeDist, dir, { recursive: true });
  return dir;
}

const failed = async (dir: string) =>
  (await runConformance(dir, { timeoutMs: 5_000 })).checks.filter((check) => check.status === 'fail');

describe('conformance kit: package files', () => {
  it.skipIf(!RUNS_AS_ROOT)(
    'an executable owned by another user fails the package rules, naming owner and fix',
    async () => {
      const dir = await copyOfNative('foreign-exec');
      const executable = join(dir, 'native-fixture');
      await chown(executable, OTHER_UID, OTHER_UID);
      expect(await failed(dir)).toEqual([
        {
          name: 'executable follows the package rules',
          status: 'fail',
          level: 'required',
          detail: `executable: the executable ${executable} is owned by uid ${OTHER_UID}, not by root (the user the host runs as): that user could replace the plugin between its verification and its start (fix: chown root ${executable}, or install the package where only you can write)`,
        },
      ]);
    },
  );

  it.skipIf(!RUNS_AS_ROOT)('a package directory owned by another user fails the package rules', async () => {
    const dir = await copyOfNative('foreign-dir');
    await chown(dir, OTHER_UID, OTHER_UID);
    const [failure] = await failed(dir);
    expect(failure!.detail).toMatch(`executable: the directory ${dir} is owned by uid ${OTHER_UID}`);
  });

  it.skipIf(!RUNS_AS_ROOT)('a plugin.json owned by another user fails, unread', async () => {
    const dir = await copyOfNative('foreign-manifest');
    await chown(join(dir, 'plugin.json'), OTHER_UID, OTHER_UID);
    const [failure] = await failed(dir);
    expect(failure).toMatchObject({ name: 'plugin.json is a valid manifest' });
    expect(failure!.detail).toMatch(`the manifest ${join(dir, 'plugin.json')} is owned by uid ${OTHER_UID}`);
  });

  it('a FIFO as plugin.json fails at once instead of hanging the kit', async () => {
    const dir = await copyOfNative('fifo-manifest');
    const path = join(dir, 'plugin.json');
    await rm(path);
    execFileSync('mkfifo', [path]);
    let timer: NodeJS.Timeout | undefined;
    try {
      const report = await Promise.race([
        runConformance(dir, { timeoutMs: 5_000 }),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error('the kit did not return within 15 s')), 15_000);
        }),
      ]);
      expect(report.checks).toEqual([
        {
          name: 'plugin.json is a valid manifest',
          status: 'fail',
          level: 'required',
          detail: `cannot read plugin.json: ${path} is a FIFO (named pipe), not a regular file: plugin.json must be a regular file in the package (it was not read)`,
        },
      ]);
    } finally {
      clearTimeout(timer);
      // Frees a reader that blocked on the FIFO (the behaviour this test rules out).
      await open(path, constants.O_WRONLY | constants.O_NONBLOCK).then(
        (handle) => handle.close(),
        () => undefined,
      );
    }
  });
});
