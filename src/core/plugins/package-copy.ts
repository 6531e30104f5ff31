// Every call runs from a read-only copy of the reviewed package (PROTOCOL
// §9.3): <data-dir>/run/packages/<tree digest>/, content-addressed by the tree
// digest (package-tree.ts), directories 0555, files 0444 or 0555, owned by the
// host's user. It is made once by copy to a temporary directory + check of
// every byte against the tree + rename, reused by every call of that tree, and
// checked before each call by its file stamps (a change: checked in full
// again, replaced when it differs). So the executable starts by a real path —
// `__file__`, `$0`, `argv[0]`, `import.meta.url` name a file next to the
// package's other files — and a swap of a file in the package after it was
// verified cannot change what runs. docs/adr/0009-run-from-a-verified-package-copy.md.
import { lstatSync, type BigIntStats } from 'node:fs';
import { chmod, mkdir, mkdtemp, open, readdir, rename, rm, symlink } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { dirname, join } from 'node:path';
import { SAFE_OPEN_FLAGS, hostUid } from '@switchyard/plugin-sdk/host';
import { fileStamp } from './fingerprint.js';
import { readPackageTree, type PackageEntry, type PackageTree } from './package-tree.js';

/** The copies this process checked, by tree digest: each entry's stamp then. */
const checked = new Map<string, Map<string, string>>();
const making = new Map<string, Promise<string>>();
const CHUNK = 1 << 20;

/** The directory of the verified copy of `tree` (read from `packageDir`) under `runRoot`, made if needed. */
export async function verifiedCopy(runRoot: string, packageDir: string, tree: PackageTree): Promise<string> {
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
  await mkdir(runRoot, { recursive: true, mode: 0o700 });
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
      const buffer = Buffer.allocUnsafe(CHUNK);
      for (let position = 0; ;) {
        const { bytesRead } = await from.read(buffer, 0, CHUNK, position);
        if (bytesRead === 0) break;
        hash.update(buffer.subarray(0, bytesRead));
        await to.write(buffer, 0, bytesRead);
        position += bytesRead;
      }
      if (hash.digest('hex') !== entry.sha256)
        throw new Error(`the package file ${source} changed since it was verified`);
    } finally {
      await to.close();
    }
  } finally {
    await from.close();
  }
}

/** A copy's directories made writable again, then removed (a missing one is fine). */
async function removeCopy(dir: string): Promise<void> {
  const writable = async (path: string): Promise<void> => {
    let stats;
    try {
      stats = lstatSync(path);
    } catch {
      return;
    }
    if (!stats.isDirectory()) return;
    await chmod(path, 0o700);
    for (const name of await readdir(path)) await writable(join(path, name));
  };
  await writable(dir);
  await rm(dir, { recursive: true, force: true });
}
