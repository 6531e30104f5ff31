// A call's scratch directory that cannot be emptied or removed after the call
// (here: a file system mounted inside it, so removing it fails with EBUSY) is
// dropped with a line on stderr: the call's own result, or its own error, is
// what superviseCall gives, and the directory is never handed to a next call.
// Real calls of the native fixture; real mounts (root only), undone in afterAll.
import { execFileSync } from 'node:child_process';
import {
  closeSync,
  cpSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  readdirSync,
  rmSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { superviseCall, type TrustedIdentity } from '../../../src/core/supervision/supervisor.js';

const isRoot = process.getuid?.() === 0;
if (!isRoot)
  console.warn('scratch release test skipped: mounting a file system in a scratch directory needs root');

const dist = join(import.meta.dirname, '../../../examples/plugins/native-fixture/dist');
const work = mkdtempSync(join(tmpdir(), 'sy-scratch-release-'));
const packageDir = join(work, 'native-fixture');
cpSync(dist, packageDir, { recursive: true });
const manifest = JSON.parse(readFileSync(join(packageDir, 'plugin.json'), 'utf8')) as TrustedIdentity & {
  executable: string;
};
const executablePath = join(packageDir, manifest.executable);
// The scratch pool makes its directories in the TMPDIR of this process: one of this test's own.
const scratchParent = join(work, 'tmp');
mkdirSync(scratchParent);
process.env.TMPDIR = scratchParent;
const mounts: string[] = [];

afterAll(() => {
  for (const mountpoint of mounts) execFileSync('umount', ['-l', mountpoint]);
  rmSync(work, { recursive: true, force: true });
});

/** The scratch directories the pool has made so far. */
const scratchDirs = () => readdirSync(scratchParent).filter((name) => name.startsWith('sy-call-'));

/** Mounts a tmpfs inside the one scratch directory not pinned yet (the running call's): nothing can remove it. */
function pinScratch(): Promise<void> {
  const dir = scratchDirs().find((name) => !mounts.some((mount) => mount.includes(`/${name}/`)));
  const mountpoint = join(scratchParent, dir!, 'pinned');
  mkdirSync(mountpoint);
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'sy-scratch-pin', mountpoint]);
  mounts.push(mountpoint);
  return Promise.resolve();
}

async function health(beforeSend?: () => Promise<void>) {
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
      ...(beforeSend ? { beforeSend } : {}),
    });
  } finally {
    closeSync(executableFd);
  }
}

describe.skipIf(!isRoot)('a scratch directory that cannot be released', () => {
  it("keeps the call's result; the directory is dropped, never given to the next call", async () => {
    const outcome = await health(pinScratch);
    expect(outcome.result).toMatchObject({ status: 'healthy' });
    expect(scratchDirs()).toHaveLength(1);
    // The next call gets a directory of its own: the pinned one was not put back in the pool.
    expect((await health()).result).toMatchObject({ status: 'healthy' });
    expect(scratchDirs()).toHaveLength(2);
  }, 30_000);

  it("keeps the call's own error", async () => {
    // The free directory left in the pool is the one this call gets and pins.
    const pinAndFail = async () => {
      await pinScratch();
      throw new Error('the dispatch mark was refused');
    };
    await expect(health(pinAndFail)).rejects.toThrow('the dispatch mark was refused');
  }, 30_000);
});
