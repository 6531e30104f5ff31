// Every call runs from a read-only copy of the reviewed package (PROTOCOL
// §9.3): <data-dir>/run/packages/<tree digest>/, content-addressed by the tree
// digest (package-tree.ts), directories 0555, files 0444 or 0555, owned by the
// host's user. It is made once by copy to a temporary directory + check of
// every byte against the tree + rename, reused by every call of that tree, and
// checked before each call by its file stamps (a change: checked in full
// again, replaced when it differs). So the executable starts by a real path —
// `__file__`, `$0`, `argv[0]`, `import.meta.url` name a file next to the
// package's other files — and a swap of a file in the package after it was
// verified cannot change what runs. The run directory and every directory
// above it pass the owner rule of the package path (PROTOCOL §3), checked
// before each use: no other user can swap a copy between its check and the
// start. docs/adr/0009-run-from-a-verified-package-copy.md.
import { constants, lstatSync, type BigIntStats } from 'node:fs';
import { chmod, mkdir, mkdtemp, open, readdir, rename, rm, symlink } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { dirname, join, resolve } from 'node:path';
import { SAFE_OPEN_FLAGS, hostUid, pathProblem, resolveDirectory } from '@switchyard/plugin-sdk/host';
import { fileStamp } from './fingerprint.js';
import { directoriesIntact } from './intact-package.js';
import { readPackageTree, readStamped, type PackageEntry, type PackageTree } from './package-tree.js';

/** The copies this process checked, by tree digest: each entry's stamp then. */
const checked = new Map<string, Map<string, string>>();
const making = new Map<string, Promise<string>>();

/** The directory of the verified copy of `tree` (read from `packageDir`) under `runRoot`, made if needed. */
export async function verifiedCopy(runRoot: string, packageDir: string, tree: PackageTree): Promise<string> {
  await checkRunRoot(runRoot);
  const dir = join(runRoot, tree.digest);
  const stamps = checked.get(tree.digest);
  if (stamps && unchanged(dir, stamps)) return dir;
  checked.delete(tree.digest);
  let pending = making.get(tree.digest);
  if (!pending) {
    pending = ensure(runRoot, dir, packageDir, tree).finally(() => making.delete(tree.digest));
    making.set(tree.digest, pending);
  }
  return pending;
}

async function ensure(runRoot: string, dir: string, packageDir: string, tree: PackageTree): Promise<string> {
  if ((await copyProblem(dir, tree)) === undefined) return remember(dir, tree);
  await removeCopy(dir); // made by another host version, half removed, or changed since: made again
  const temporary = await mkdtemp(join(runRoot, '.making-'));
  try {
    for (const entry of tree.entries) await copyEntry(packageDir, temporary, entry, tree.stamps);
    // Read-only from the deepest entry up: the directories last, the copy's own directory at the end.
    for (const entry of [...tree.entries].reverse()) {
      if (entry.type === 'symlink') continue;
      await chmod(join(temporary, entry.path), copyMode(entry));
    }
    const problem = await copyProblem(temporary, tree);
    if (problem) throw new Error(problem);
    try {
      await rename(temporary, dir);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'ENOTEMPTY' && code !== 'EEXIST') throw error;
      // Another worker on this data dir made it meanwhile: it is used once it checks out.
      await removeCopy(temporary);
      const theirs = await copyProblem(dir, tree);
      if (theirs) throw new Error(theirs);
    }
  } catch (error) {
    await removeCopy(temporary);
    throw error;
  }
  return remember(dir, tree);
}

/** Why `dir` is not a faithful read-only copy of `tree`; undefined when it is. */
async function copyProblem(dir: string, tree: PackageTree): Promise<string | undefined> {
  let present = true;
  try {
    lstatSync(dir);
  } catch {
    present = false;
  }
  if (!present) return `${dir} does not exist`;
  const read = await readPackageTree(dir);
  if (!read.ok) return read.error;
  const copy = read.tree.entries;
  if (copy.length !== tree.entries.length) return `${dir} holds other files than the package`;
  const host = hostUid();
  for (const [index, entry] of tree.entries.entries()) {
    const made = copy[index]!;
    const stats = read.tree.stamps.get(made.path)!;
    if (
      made.path !== entry.path ||
      made.type !== entry.type ||
      made.sha256 !== entry.sha256 ||
      made.target !== entry.target ||
      (host !== undefined && Number(stats.uid) !== host) ||
      (entry.type !== 'symlink' && Number(stats.mode & 0o7777n) !== copyMode(entry))
    )
      return `${join(dir, made.path)} differs from the package's ${entry.path}`;
  }
  return undefined;
}

/**
 * The run directory as the owner rule of PROTOCOL §3 wants it: each missing
 * level made 0700 (by the host's user), then the directory and every one
 * above it, and every symlink on the way, owned by root or the host's user and
 * not writable by others (sticky above it is fine). Throws the first problem,
 * with the path and the fix. A few lstat calls when nothing is missing.
 */
export async function checkRunRoot(runRoot: string): Promise<void> {
  const absolute = resolve(runRoot);
  const missing: string[] = [];
  let existing = absolute;
  while (!present(existing)) {
    missing.unshift(existing);
    existing = dirname(existing);
  }
  const refuse = (problem: string) =>
    new Error(
      `the directory of verified package copies ${absolute} cannot be trusted: ${problem}; no call starts until it is fixed`,
    );
  // The usual case, before each call: it exists and passes, seen with a few synchronous lstat calls
  // (the asynchronous resolution below took 8 % of a worker's CPU per call; docs/benchmarks/runs.md).
  if (missing.length === 0 && runRootIntact(absolute)) return;
  // Judged before anything is made inside it, and again after.
  const above = await pathProblem(await resolveDirectory(existing));
  if (above) throw refuse(above);
  // The usual case, before each call: it exists, and that one check covered it.
  if (missing.length === 0) return;
  for (const level of missing) {
    try {
      await mkdir(level, { mode: 0o700 });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  }
  const problem = await pathProblem(await resolveDirectory(absolute));
  if (problem) throw refuse(problem);
}

function runRootIntact(directory: string): boolean {
  try {
    return directoriesIntact(directory);
  } catch {
    return false; // gone meanwhile: the full path says so
  }
}

function present(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

function remember(dir: string, tree: PackageTree): string {
  if (checked.size >= 512) checked.delete(checked.keys().next().value!);
  checked.set(tree.digest, stampsOf(dir, tree.entries));
  return dir;
}

function stampsOf(dir: string, entries: readonly PackageEntry[]): Map<string, string> {
  return new Map(
    entries.map((entry) => [entry.path, fileStamp(lstatSync(join(dir, entry.path), { bigint: true }))]),
  );
}

/** Every entry of the copy still has the stamp it had when checked (a few lstat calls). */
function unchanged(dir: string, stamps: Map<string, string>): boolean {
  try {
    for (const [path, stamp] of stamps)
      if (fileStamp(lstatSync(join(dir, path), { bigint: true })) !== stamp) return false;
    return true;
  } catch {
    return false;
  }
}

/** Directories 0555; files 0555 when the original has an execute bit, else 0444. */
function copyMode(entry: PackageEntry): number {
  if (entry.type === 'directory') return 0o555;
  return (parseInt(entry.mode, 8) & 0o111) !== 0 ? 0o555 : 0o444;
}

async function copyEntry(
  packageDir: string,
  into: string,
  entry: PackageEntry,
  stamps: Map<string, BigIntStats>,
): Promise<void> {
  const target = join(into, entry.path);
  if (entry.type === 'directory') {
    await mkdir(target, { recursive: true, mode: 0o700 });
    return;
  }
  await mkdir(dirname(target), { recursive: true, mode: 0o700 });
  if (entry.type === 'symlink') {
    await symlink(entry.target!, target);
    return;
  }
  // The very file the tree hashed (its stamp), and the bytes copied are the bytes hashed.
  const source = join(packageDir, entry.path);
  const from = await open(source, SAFE_OPEN_FLAGS);
  try {
    const stats = await from.stat({ bigint: true });
    const expected = stamps.get(entry.path);
    if (!expected || fileStamp(stats) !== fileStamp(expected))
      throw new Error(`the package file ${source} changed since it was verified`);
    const to = await open(target, 'wx', 0o600);
    try {
      const hash = createHash('sha256');
      // At most the stamped size: a file that grows as it is read cannot fill the disk.
      const read = await readStamped(from, expected.size, async (bytes) => {
        hash.update(bytes);
        await to.write(bytes);
      });
      if (read === 'longer')
        throw new Error(
          `the package file ${source} holds more than the ${expected.size} bytes it had when verified; the copy was stopped (try again once it no longer changes)`,
        );
      if (read === 'shorter' || hash.digest('hex') !== entry.sha256)
        throw new Error(`the package file ${source} changed since it was verified`);
    } finally {
      await to.close();
    }
  } finally {
    await from.close();
  }
}

const DIRECTORY_NO_FOLLOW = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;

/** A copy's directories made writable again, then removed (a missing one is fine). */
async function removeCopy(dir: string): Promise<void> {
  const writable = async (path: string): Promise<void> => {
    // By a descriptor of the directory itself: a symlink (or anything else) swapped in is left alone.
    let handle;
    try {
      handle = await open(path, DIRECTORY_NO_FOLLOW);
    } catch {
      return;
    }
    try {
      await handle.chmod(0o700);
    } finally {
      await handle.close();
    }
    for (const name of await readdir(path)) await writable(join(path, name));
  };
  await writable(dir);
  await rm(dir, { recursive: true, force: true });
}
