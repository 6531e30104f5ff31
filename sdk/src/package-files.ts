// PROTOCOL.md §3 on disk: the executable must be a regular file inside the
// package (no symlink, not even through a parent directory), executable, not
// group- or world-writable, and at most 128 MiB. Shared by the conformance
// kit and the host, so both judge a package the same way.
//
// Beyond the Go original: the directories that hold the executable (from the
// root down to the executable's own) must not be writable by group or others
// either, unless sticky (as OpenSSH's StrictModes asks of ~/.ssh). Otherwise another user
// could swap the file between the host verifying its fingerprint and starting
// it — on a shared workstation, the review would not protect anything.
import { lstat, open, realpath, stat } from 'node:fs/promises';
import type { Stats } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { MAX_EXECUTABLE_BYTES, MAX_MANIFEST_BYTES } from './constants.js';
import { executablePathErrors } from './manifest.js';

export type ExecutableCheck = { ok: true; path: string; stats: Stats } | { ok: false; error: string };

export async function checkExecutable(packageDir: string, executable: string): Promise<ExecutableCheck> {
  const lexical = executablePathErrors(executable);
  if (lexical.length > 0) return { ok: false, error: lexical[0]! };
  const path = join(packageDir, executable);
  let stats: Stats;
  try {
    stats = await lstat(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return {
      ok: false,
      error:
        code === 'ENOENT'
          ? `executable: ${executable} does not exist in the package`
          : `executable: cannot read ${executable} (${code})`,
    };
  }
  if (stats.isSymbolicLink())
    return { ok: false, error: `executable: ${executable} is a symlink; it must be a regular file` };
  if (!stats.isFile()) return { ok: false, error: `executable: ${executable} is not a regular file` };
  try {
    const [realPackage, realParent] = await Promise.all([realpath(packageDir), realpath(dirname(path))]);
    if (realParent !== realPackage && !realParent.startsWith(realPackage + sep)) {
      return { ok: false, error: `executable: ${executable} resolves outside the package directory` };
    }
    const directory = await unsafeDirectory(realPackage, realParent);
    if (directory) return { ok: false, error: `executable: ${directory}` };
  } catch (error) {
    return {
      ok: false,
      error: `executable: cannot resolve ${executable} (${(error as NodeJS.ErrnoException).code})`,
    };
  }
  const problem = modeProblem(stats.mode, stats.size);
  if (problem) return { ok: false, error: `executable: ${executable} ${problem}` };
  return { ok: true, path, stats };
}

/**
 * The first directory another user could change entries of — every directory
 * from the root down to the package, and below it down to `realInnermost`
 * (real paths) — described with how to fix it; undefined when none.
 */
async function unsafeDirectory(realPackage: string, realInnermost: string): Promise<string | undefined> {
  const chain = [realPackage];
  for (let parent = dirname(realPackage); parent !== chain[0]; parent = dirname(parent))
    chain.unshift(parent);
  const below = relative(realPackage, realInnermost);
  let current = realPackage;
  for (const part of below === '' ? [] : below.split(sep)) {
    current = join(current, part);
    chain.push(current);
  }
  const modes = await Promise.all(chain.map(async (directory) => (await stat(directory)).mode));
  for (const [index, directory] of chain.entries()) {
    const mode = modes[index]!;
    const sticky = (mode & 0o1000) !== 0;
    if (sticky) continue;
    const kind = (mode & 0o002) !== 0 ? 'world' : (mode & 0o020) !== 0 ? 'group' : undefined;
    if (kind) {
      return `the directory ${directory} is ${kind}-writable (chmod ${kind[0]}-w it): others could replace the plugin between its verification and its start`;
    }
  }
  return undefined;
}

/** The mode and size rules alone, for a file already opened and fstat-ed. */
export function modeProblem(mode: number, size: number): string | undefined {
  if ((mode & 0o111) === 0) return 'has no execute bit (chmod 0755 it)';
  if ((mode & 0o020) !== 0) return 'is group-writable (chmod g-w it)';
  if ((mode & 0o002) !== 0) return 'is world-writable (chmod o-w it)';
  if (size > MAX_EXECUTABLE_BYTES) return `is larger than ${MAX_EXECUTABLE_BYTES} bytes (128 MiB)`;
  return undefined;
}

/**
 * plugin.json read bounded (PROTOCOL §2): at most the limit plus one byte, so
 * an oversized file is recognisable (`length > MAX_MANIFEST_BYTES`) without
 * reading it whole. Undefined when the file does not exist.
 */
export async function readManifestBytes(path: string): Promise<Buffer | undefined> {
  let handle;
  try {
    handle = await open(path, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  try {
    const buffer = Buffer.alloc(MAX_MANIFEST_BYTES + 1);
    let total = 0;
    while (total < buffer.length) {
      const { bytesRead } = await handle.read(buffer, total, buffer.length - total, total);
      if (bytesRead === 0) break;
      total += bytesRead;
    }
    return buffer.subarray(0, total);
  } finally {
    await handle.close();
  }
}
