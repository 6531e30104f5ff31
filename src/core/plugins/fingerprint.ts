// docs/PROTOCOL.md §4 fingerprints, recomputed before every call. The executable is
// hashed from the descriptor that was fstat-ed (so the checked file is the
// hashed file: type, owner and mode) and streamed, never loaded whole. It is
// opened without following a symlink and without blocking on a FIFO.
import { createHash } from 'node:crypto';
import type { BigIntStats } from 'node:fs';
import { open } from 'node:fs/promises';
import { SAFE_OPEN_FLAGS, fileKind, modeProblem, ownerProblem } from '@switchyard/plugin-sdk/host';

const CHUNK = 1 << 20;

/**
 * Results keyed on what makes reuse sound: the manifest's exact bytes and the
 * executable's device, inode, size, mtime and ctime in nanoseconds. Any write
 * to the file moves ctime, which no user can set back. A file whose ctime is
 * within RACY_MS of the moment it was hashed is never cached: a second write
 * inside the same clock tick could leave every stat field unchanged ("racy
 * git" problem), so such files are re-hashed until they are old enough.
 */
const cache = new Map<string, string>();
const CACHE_LIMIT = 1_000;
const RACY_MS = 2_000n;

export interface HashOptions {
  /** Skip the cache (the benchmark's "before" figure). */
  noCache?: boolean;
  /** Told the fstat of the descriptor that was checked and hashed (its identity, for exec by descriptor). */
  onStats?: (stats: BigIntStats) => void;
}

/**
 * The file stamp: what identifies one version of a file by its lstat/fstat —
 * any write moves ctime (no user can set it back), a rename changes the inode,
 * chmod and chown change mode and uid. Every cache of a file's hash here is
 * keyed on it (this file's fingerprints, package-tree.ts's per-file hashes).
 */
export function fileStamp(stats: BigIntStats): string {
  return `${stats.dev}:${stats.ino}:${stats.size}:${stats.mtimeNs}:${stats.ctimeNs}:${stats.mode}:${stats.uid}`;
}

/** A hash made of a file this old may be cached under its stamp (see RACY_MS). */
export function settled(stats: BigIntStats): boolean {
  return BigInt(Date.now()) * 1_000_000n - stats.ctimeNs > RACY_MS * 1_000_000n;
}

/** What identifies one version of a file: any write moves ctime, a rename changes the inode. */
export function sameFile(a: BigIntStats, b: BigIntStats): boolean {
  return (
    a.dev === b.dev &&
    a.ino === b.ino &&
    a.size === b.size &&
    a.mtimeNs === b.mtimeNs &&
    a.ctimeNs === b.ctimeNs
  );
}

export async function hashExecutable(
  manifestBytes: Uint8Array,
  executablePath: string,
  options: HashOptions = {},
): Promise<string | { error: string }> {
  let handle;
  try {
    handle = await open(executablePath, SAFE_OPEN_FLAGS);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return { error: code === 'ELOOP' ? 'executable: is a symlink' : `executable: cannot open (${code})` };
  }
  try {
    const stats = await handle.stat({ bigint: true });
    if (!stats.isFile()) return { error: `executable: is ${fileKind(stats)}, not a regular file` };
    const owner = await ownerProblem('the executable', executablePath, stats);
    if (owner) return { error: `executable: ${owner}` };
    const problem = modeProblem(Number(stats.mode), Number(stats.size));
    if (problem) return { error: `executable: ${problem}` };
    options.onStats?.(stats);
    const key = cacheKey(manifestBytes, stats);
    const cached = options.noCache ? undefined : cache.get(key);
    if (cached) return cached;

    const hash = createHash('sha256').update(manifestBytes);
    const buffer = Buffer.allocUnsafe(CHUNK);
    let position = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buffer, 0, CHUNK, position);
      if (bytesRead === 0) break;
      hash.update(buffer.subarray(0, bytesRead));
      position += bytesRead;
    }
    const fingerprint = hash.digest('hex');
    if (!options.noCache && settled(stats)) {
      if (cache.size >= CACHE_LIMIT) cache.delete(cache.keys().next().value!);
      cache.set(key, fingerprint);
    }
    return fingerprint;
  } finally {
    await handle.close();
  }
}

/** A manifest up to this size is its own key (checked before every call): no hash to compute. */
const MANIFEST_KEPT_BYTES = 4_096;

function cacheKey(manifestBytes: Uint8Array, stats: BigIntStats): string {
  // latin1: one character per byte, so two keys are equal exactly when the bytes are.
  const manifest =
    manifestBytes.length <= MANIFEST_KEPT_BYTES
      ? `=${Buffer.from(manifestBytes.buffer, manifestBytes.byteOffset, manifestBytes.length).toString('latin1')}`
      : `#${createHash('sha256').update(manifestBytes).digest('hex')}`;
  return `${fileStamp(stats)}:${manifest}`;
}

/**
 * The fingerprint hashExecutable computed and cached for these manifest bytes
 * and this executable (its fstat of the descriptor that was checked); undefined
 * when there is none yet.
 */
export function cachedFingerprint(manifestBytes: Uint8Array, stats: BigIntStats): string | undefined {
  return cache.get(cacheKey(manifestBytes, stats));
}
