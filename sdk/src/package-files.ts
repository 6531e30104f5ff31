// docs/PROTOCOL.md §3 on disk: the executable must be a regular file inside the
// package (no symlink, not even through a parent directory), executable, not
// group- or world-writable, and at most 128 MiB; plugin.json a regular file.
// Shared by the conformance kit and the host (discovery and every call), so
// all three judge a package the same way.
//
// Beyond the Go original, as OpenSSH's StrictModes (path-safety.ts): the
// files, the package directory and every directory above them must be owned
// by root or the host's user and not writable by group or others unless
// sticky. Otherwise another user could swap the file between the host
// verifying its fingerprint and starting it — on a shared workstation, the
// review would not protect anything.
//
// Nothing here ever blocks on a FIFO or reads a device: files are opened with
// O_NONBLOCK | O_NOFOLLOW and their type is checked on the descriptor first.
import { constants, type Stats } from 'node:fs';
import { lstat, open, realpath } from 'node:fs/promises';
import { dirname, join, sep } from 'node:path';
import { MAX_EXECUTABLE_BYTES, MAX_MANIFEST_BYTES } from './constants.js';
import { executablePathErrors } from './manifest.js';
import { fileKind, ownerProblem, pathProblem, resolveDirectory } from './path-safety.js';

export type ExecutableCheck = { ok: true; path: string; stats: Stats } | { ok: false; error: string };

/** A package file refused before a byte of it was read (wrong type, symlink, foreign owner). */
export class PackageFileError extends Error {}

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
  if (!stats.isFile())
    return { ok: false, error: `executable: ${executable} is ${fileKind(stats)}, not a regular file` };
  try {
    const [realPackage, parent] = await Promise.all([realpath(packageDir), resolveDirectory(dirname(path))]);
    if (parent.real !== realPackage && !parent.real.startsWith(realPackage + sep)) {
      return { ok: false, error: `executable: ${executable} resolves outside the package directory` };
    }
    const problem = await pathProblem(parent, realPackage);
    if (problem) return { ok: false, error: `executable: ${problem}` };
  } catch (error) {
    return {
      ok: false,
      error: `executable: cannot resolve ${executable} (${(error as NodeJS.ErrnoException).code})`,
    };
  }
  const owner = await ownerProblem('the executable', path, stats);
  if (owner) return { ok: false, error: `executable: ${owner}` };
  const problem = modeProblem(stats.mode, stats.size);
  if (problem) return { ok: false, error: `executable: ${executable} ${problem}` };
  return { ok: true, path, stats };
}

/** The mode and size rules alone, for a file already opened and fstat-ed. */
export function modeProblem(mode: number, size: number): string | undefined {
  if ((mode & 0o111) === 0) return 'has no execute bit (chmod 0755 it)';
  if ((mode & 0o020) !== 0) return 'is group-writable (chmod g-w it)';
  if ((mode & 0o002) !== 0) return 'is world-writable (chmod o-w it)';
  if (size > MAX_EXECUTABLE_BYTES) return `is larger than ${MAX_EXECUTABLE_BYTES} bytes (128 MiB)`;
  return undefined;
}

/** Flags that never block on a FIFO and never follow a final symlink. */
export const SAFE_OPEN_FLAGS = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0) | (constants.O_NOFOLLOW ?? 0);

/**
 * plugin.json read bounded (PROTOCOL §2): at most the limit plus one byte, so
 * an oversized file is recognisable (`length > MAX_MANIFEST_BYTES`) without
 * reading it whole. Undefined when the file does not exist. Throws
 * PackageFileError, before reading anything, for a symlink, a FIFO, a
 * socket, a device or a directory, and for a file of a foreign owner (§3).
 */
export async function readManifestBytes(path: string): Promise<Buffer | undefined> {
  let handle;
  try {
    handle = await open(path, SAFE_OPEN_FLAGS);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return undefined;
    // ELOOP: a symlink (O_NOFOLLOW); ENXIO: a socket. Say which, from lstat.
    const kind = await lstat(path).then(fileKind, () => undefined);
    throw new PackageFileError(
      kind && kind !== 'a regular file' ? notRegular(path, kind) : `cannot open ${path} (${code})`,
    );
  }
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) throw new PackageFileError(notRegular(path, fileKind(stats)));
    const owner = await ownerProblem('the manifest', path, stats);
    if (owner) throw new PackageFileError(owner);
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

function notRegular(path: string, kind: string): string {
  return `${path} is ${kind}, not a regular file: plugin.json must be a regular file in the package (it was not read)`;
}
