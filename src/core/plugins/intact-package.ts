// The per-call package verification (PROTOCOL §9.2) on its fast path: every
// rule of §3 and the fingerprint of §4, checked with synchronous system calls
// on local metadata (about a dozen lstat/open/fstat/read, microseconds each)
// instead of the same number of promise-based ones, which each cost a
// thread-pool round trip, promises and a FileHandle on the event loop — the
// largest share of a worker's CPU per call before this (docs/benchmarks/runs.md,
// fourth run). It only ever answers "intact, fingerprint X": anything else (a rule
// broken, a symlink or ".." on the way, a fingerprint not cached yet, any
// error) is undefined, and the caller runs the full asynchronous path, which
// checks everything again, words the error and hashes the file.
import { closeSync, fstatSync, lstatSync, openSync, readSync, type BigIntStats } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { MAX_MANIFEST_BYTES } from '@switchyard/plugin-sdk/protocol';
import {
  SAFE_OPEN_FLAGS,
  executablePathErrors,
  hostUid,
  modeProblem,
  writableDirectoryProblem,
  isInPackage,
} from '@switchyard/plugin-sdk/host';
import { cachedFingerprint } from './fingerprint.js';

export interface PackageLocation {
  packageDir: string;
  executable: string;
  manifestPath: string;
}

/** The fingerprint when the package passes every on-disk rule and its fingerprint is cached; else undefined. */
export function intactFingerprint(
  location: PackageLocation,
  onStats?: (stats: BigIntStats) => void,
): string | undefined {
  const intact = intactExecutable(location);
  if (!intact) return undefined;
  closeSync(intact.fd);
  onStats?.(intact.stats);
  return intact.fingerprint;
}

/** What passed: the fingerprint, and the executable checked, still open (the caller closes `fd`). */
export interface IntactExecutable {
  fingerprint: string;
  /** The descriptor the checks and the cached fingerprint were made on: the call starts from it. */
  fd: number;
  stats: BigIntStats;
}

/**
 * Every directory from `directory` (absolute, normalised) up to /, by synchronous lstat: a real
 * directory, not a symlink (so the physical path is this one, and stays inside the package), owned
 * by root or the host's user, not writable by group or others (sticky only counts outside
 * `packageDir`): the rule pathProblem(resolveDirectory()) words, for the case that passes it.
 * False on any doubt, and a missing directory throws: the caller's full path says what is wrong.
 */
export function directoriesIntact(directory: string, packageDir?: string): boolean {
  for (let current = directory; ; current = dirname(current)) {
    const stats = lstatSync(current);
    if (!stats.isDirectory() || !ownedRight(stats.uid)) return false;
    const inPackage = packageDir !== undefined && isInPackage(current, packageDir);
    if (writableDirectoryProblem(current, stats.mode, inPackage)) return false;
    if (current === dirname(current)) return true;
  }
}

/** The owner rule of PROTOCOL §3: root or the host's user (anyone when the host's uid is unknown). */
function ownedRight(uid: number | bigint): boolean {
  const host = hostUid();
  return host === undefined || Number(uid) === 0 || Number(uid) === host;
}

/** As intactFingerprint, keeping the checked executable open: no second open and fstat before the call. */
export function intactExecutable(location: PackageLocation): IntactExecutable | undefined {
  try {
    return check(location);
  } catch {
    return undefined; // ENOENT, EACCES, ELOOP, …: the full path says what it is
  }
}

function check({ packageDir, executable, manifestPath }: PackageLocation): IntactExecutable | undefined {
  if (executable === '' || executablePathErrors(executable).length > 0) return undefined;
  if (resolve(packageDir) !== packageDir) return undefined; // relative or not normalised
  const path = join(packageDir, executable);

  // The executable by name: a regular file (not a symlink), owned right, mode and size rules.
  const named = lstatSync(path);
  if (!named.isFile() || !ownedRight(named.uid) || modeProblem(named.mode, named.size)) return undefined;
  if (!directoriesIntact(dirname(path), packageDir)) return undefined;

  // plugin.json: opened without following a symlink or blocking, a regular file owned right, read whole.
  let manifest: Buffer;
  const manifestFd = openSync(manifestPath, SAFE_OPEN_FLAGS);
  try {
    const stats = fstatSync(manifestFd);
    if (!stats.isFile() || !ownedRight(stats.uid) || stats.size > MAX_MANIFEST_BYTES) return undefined;
    // One byte more than fstat said: a file that grew meanwhile goes to the full path.
    const buffer = Buffer.allocUnsafe(stats.size + 1);
    let total = 0;
    for (;;) {
      const read = readSync(manifestFd, buffer, total, buffer.length - total, total);
      total += read;
      if (total === buffer.length) return undefined;
      // Short of the byte asked beyond the size: the end of the file (no second read to see 0).
      if (read === 0 || total === stats.size) break;
    }
    manifest = buffer.subarray(0, total);
  } finally {
    closeSync(manifestFd);
  }

  // The executable by descriptor, as hashExecutable checks it; its cached fingerprint.
  const fd = openSync(path, SAFE_OPEN_FLAGS);
  let kept = false;
  try {
    const stats = fstatSync(fd, { bigint: true });
    if (!stats.isFile() || !ownedRight(stats.uid)) return undefined;
    if (modeProblem(Number(stats.mode), Number(stats.size))) return undefined;
    const fingerprint = cachedFingerprint(manifest, stats);
    if (fingerprint === undefined) return undefined;
    kept = true;
    return { fingerprint, fd, stats };
  } finally {
    if (!kept) closeSync(fd);
  }
}
