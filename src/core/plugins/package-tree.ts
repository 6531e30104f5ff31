// The whole package as reviewed (docs/PROTOCOL.md §3, §4): every file,
// directory and symlink under the package directory passes the owner rule
// (owned by root or the host's user, not group- or world-writable), nothing
// else is there (no FIFO, socket or device), every name is UTF-8, every
// symlink resolves to an existing entry inside the package, and the
// tree digest — SHA-256 over each entry's relative path, type, mode bits and
// content hash (a symlink: its target), sorted — names exactly what was
// reviewed. Bounded (MAX_PACKAGE_ENTRIES, MAX_PACKAGE_BYTES). Run at discovery,
// at trust and before every call, so it is cheap when nothing changed: a
// directory walk of lstat calls, and a file is hashed again only when its file
// stamp (fingerprint.ts) moved. Why the whole tree: docs/adr/0009-run-from-a-verified-package-copy.md.
import { createHash } from 'node:crypto';
import type { BigIntStats } from 'node:fs';
import { lstatSync, readdirSync, readlinkSync, realpathSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { dirname, isAbsolute, join, normalize, sep } from 'node:path';
import {
  SAFE_OPEN_FLAGS,
  fileKind,
  isInPackage,
  ownerProblem,
  writableDirectoryProblem,
} from '@switchyard/plugin-sdk/host';
import { fileStamp, settled } from './fingerprint.js';

/** At most this many entries (files, directories, symlinks, the package directory itself). */
export const MAX_PACKAGE_ENTRIES = 1_000;
/** At most this many bytes in all its files together (256 MiB; the executable alone may hold 128). */
export const MAX_PACKAGE_BYTES = 256 * 1024 * 1024;

export type PackageEntryType = 'file' | 'directory' | 'symlink';

/** One entry of a package, as the review shows it and the tree digest covers it. */
export interface PackageEntry {
  /** Relative to the package directory, `/`-separated; `.` is the package directory itself. */
  path: string;
  type: PackageEntryType;
  /** Permission bits, four octal digits (`0755`). */
  mode: string;
  size: number;
  /** Lowercase hex SHA-256 of a file's bytes. */
  sha256?: string;
  /** A symlink's target, as it reads. */
  target?: string;
}

export interface PackageTree {
  digest: string;
  entries: PackageEntry[];
  /** Each entry's file stamp when it was read (what a copy of it is checked against). */
  stamps: Map<string, BigIntStats>;
}

/** A package that breaks a rule still has a tree when it could be read (to tell whether it also changed). */
export type TreeResult = { ok: true; tree: PackageTree } | { ok: false; error: string; tree?: PackageTree };

/** At most this many plugin packages under the plugins directory (discovery.ts refuses more). */
export const MAX_PACKAGES = 100;

/**
 * Per-file hashes by absolute path, reused while the file's stamp stays the
 * same; least recently used dropped first. Room for every file of the most
 * packages at their most entries, twice (the packages and their verified
 * copies): 100 × 1,000 × 2 = 200,000, so a full host never re-hashes its
 * files on each call (one entry is a path and two short strings, ~0.3 KB).
 */
const hashes = new Map<string, { stamp: string; sha256: string }>();
const HASHES_KEPT = MAX_PACKAGES * MAX_PACKAGE_ENTRIES * 2;
/** The most entries added since the review that the check before a call walks (see walk()). */
const UNREVIEWED_ENTRIES = MAX_PACKAGE_ENTRIES * 10;
let hashedFiles = 0;

/** How many files were read and hashed (not taken from the cache) by this process so far. */
export function filesHashed(): number {
  return hashedFiles;
}
const CHUNK = 1 << 20;

/**
 * The package's tree as it is on disk now, or the first rule it breaks (with the path and the fix).
 * `reviewed`: the paths of the trusted listing, for a trusted package. The bounds count only these
 * (walk()), and a file added since whose read fails (a log the plugin appends to next to itself,
 * "changed while it was read") is listed without a hash instead of refusing the package: it is not
 * part of what runs, and a new review reads it again. `hashOnly` (before a call): only these files
 * are read and hashed; any other still passes the owner rule.
 */
export async function readPackageTree(
  packageDir: string,
  options: { hashOnly?: ReadonlySet<string>; reviewed?: ReadonlySet<string> } = {},
): Promise<TreeResult> {
  const walked = walk(packageDir, options.reviewed ?? options.hashOnly);
  if ('error' in walked) return { ok: false, error: walked.error };
  let realPackage: string;
  try {
    realPackage = realpathSync.native(packageDir);
  } catch (error) {
    const { code } = error as NodeJS.ErrnoException;
    return { ok: false, error: `cannot resolve the package directory ${packageDir} (${code})` };
  }
  let problem: string | undefined;
  for (const [path, stats] of walked.found) {
    problem = await entryProblem(join(packageDir, path), stats);
    if (problem) break;
  }
  const entries: PackageEntry[] = [];
  for (const [path, stats] of walked.found) {
    const entry = await describe(packageDir, realPackage, path, stats, options);
    if ('error' in entry) return { ok: false, error: problem ?? entry.error };
    entries.push(entry);
  }
  const tree = { digest: treeDigest(entries), entries, stamps: walked.found };
  return problem ? { ok: false, error: problem, tree } : { ok: true, tree };
}

/**
 * Every entry's lstat, sorted by relative path; refused over the bounds before any file is read.
 * With `reviewed` (the check before a call), the bounds count the reviewed entries only: files a
 * plugin run unconfined adds next to itself (pid files, logs) are not part of what runs, and only
 * the host's user can add them (the owner rule); they are still walked, at most
 * UNREVIEWED_ENTRIES of them, so the walk stays bounded.
 */
function walk(
  packageDir: string,
  reviewed?: ReadonlySet<string>,
): { found: Map<string, BigIntStats> } | { error: string } {
  const found: [string, BigIntStats][] = [];
  let bytes = 0;
  let counted = 0;
  let unreviewed = 0;
  const visit = (relative: string): string | undefined => {
    const absolute = relative === '.' ? packageDir : join(packageDir, relative);
    const stats = lstatSync(absolute, { bigint: true });
    found.push([relative, stats]);
    const counts = !reviewed || reviewed.has(relative);
    if (counts) counted += 1;
    else unreviewed += 1;
    if (counted > MAX_PACKAGE_ENTRIES)
      return `the package ${packageDir} holds more than ${MAX_PACKAGE_ENTRIES} files and directories, the most a package may hold (PROTOCOL §3); remove what the plugin does not need`;
    if (unreviewed > UNREVIEWED_ENTRIES)
      return `the package ${packageDir} holds more than ${UNREVIEWED_ENTRIES} files and directories added since its review (PROTOCOL §3); remove what the plugin wrote next to itself`;
    if (counts && stats.isFile()) bytes += Number(stats.size);
    if (bytes > MAX_PACKAGE_BYTES)
      return `the package ${packageDir} holds more than ${MAX_PACKAGE_BYTES} bytes (256 MiB), the most a package may hold (PROTOCOL §3); remove what the plugin does not need`;
    if (!stats.isDirectory()) return undefined;
    // Read as bytes: a name that is not UTF-8 would be decoded lossily, to a name that is not the file's.
    const names: string[] = [];
    for (const raw of readdirSync(absolute, { encoding: 'buffer' })) {
      const name = raw.toString('utf8');
      if (!Buffer.from(name, 'utf8').equals(raw))
        return `the directory ${absolute} holds a name that is not valid UTF-8 (${JSON.stringify(raw.toString('latin1'))} as Latin-1): a package's names must be UTF-8, so the review shows each file as it is (rename it)`;
      names.push(name);
    }
    for (const name of names.sort()) {
      const problem = visit(relative === '.' ? name : `${relative}/${name}`);
      if (problem) return problem;
    }
    return undefined;
  };
  try {
    const problem = visit('.');
    if (problem) return { error: problem };
  } catch (error) {
    const { code, path } = error as NodeJS.ErrnoException;
    return {
      error: `cannot read the package file ${path ?? packageDir} (${code}); the package cannot be verified`,
    };
  }
  found.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return { found: new Map(found) };
}

/** The owner rule of PROTOCOL §3 for one entry, and its type. */
async function entryProblem(path: string, stats: BigIntStats): Promise<string | undefined> {
  const kind = stats.isDirectory() ? 'the directory' : stats.isSymbolicLink() ? 'the symlink' : 'the file';
  if (!stats.isFile() && !stats.isDirectory() && !stats.isSymbolicLink())
    return `${path} is ${fileKind(stats)}: a package holds only files, directories and symlinks (remove it)`;
  const owner = await ownerProblem(kind, path, stats);
  if (owner) return owner;
  const mode = Number(stats.mode);
  if (stats.isDirectory()) return writableDirectoryProblem(path, mode, true);
  if (stats.isSymbolicLink()) return undefined; // its own mode bits mean nothing on Linux
  const who = (mode & 0o002) !== 0 ? 'world' : (mode & 0o020) !== 0 ? 'group' : undefined;
  if (!who) return undefined;
  return (
    `the file ${path} is ${who}-writable (chmod ${who === 'world' ? 'o' : 'g'}-w it): another user could ` +
    `change code the plugin runs (a module it imports) after its review`
  );
}

async function describe(
  packageDir: string,
  realPackage: string,
  path: string,
  stats: BigIntStats,
  options: { hashOnly?: ReadonlySet<string>; reviewed?: ReadonlySet<string> } = {},
): Promise<PackageEntry | { error: string }> {
  const { hashOnly, reviewed } = options;
  const base = { path, mode: (Number(stats.mode) & 0o7777).toString(8).padStart(4, '0') };
  if (stats.isDirectory()) return { ...base, type: 'directory', size: 0 };
  const absolute = join(packageDir, path);
  if (stats.isSymbolicLink()) {
    const target = readlinkSync(absolute);
    const landing = normalize(join(dirname(path), target));
    const outside = `the symlink ${absolute} points outside the package (${target}): a package may only link to its own files (replace it with the file)`;
    if (isAbsolute(target) || landing === '..' || landing.startsWith(`..${sep}`)) return { error: outside };
    // The text alone is not enough: the kernel resolves ".." after following a link (d -> ., u -> d/..).
    let real: string;
    try {
      real = realpathSync.native(absolute); // the kernel's: Node's own resolves ".." as text
    } catch (error) {
      const { code } = error as NodeJS.ErrnoException;
      return {
        error: `the symlink ${absolute} (${target}) does not resolve (${code}): a package may only link to its own files (fix or remove it)`,
      };
    }
    if (!isInPackage(real, realPackage))
      return { error: outside.replace(`(${target})`, `(${target}, which resolves to ${real})`) };
    return { ...base, type: 'symlink', size: 0, target };
  }
  // Checked before anything is opened: a FIFO would block or fail the read, a device has no end.
  if (!stats.isFile())
    return {
      error: `${absolute} is ${fileKind(stats)}: a package holds only files, directories and symlinks (remove it)`,
    };
  if (hashOnly && !hashOnly.has(path)) return { ...base, type: 'file', size: Number(stats.size) };
  const sha256 = await hashFile(absolute, stats);
  if (typeof sha256 !== 'string') {
    if (reviewed && !reviewed.has(path)) return { ...base, type: 'file', size: Number(stats.size) };
    return sha256;
  }
  return { ...base, type: 'file', size: Number(stats.size), sha256 };
}

/** The file's SHA-256, from the cache while its stamp is unchanged; read from a descriptor checked to be that file. */
async function hashFile(path: string, named: BigIntStats): Promise<string | { error: string }> {
  const stamp = fileStamp(named);
  const cached = hashes.get(path);
  if (cached?.stamp === stamp) {
    hashes.delete(path); // most recently used last
    hashes.set(path, cached);
    return cached.sha256;
  }
  const changed = { error: `the package file ${path} changed while it was read; try again` };
  let handle;
  try {
    handle = await open(path, SAFE_OPEN_FLAGS);
  } catch (error) {
    return { error: `cannot open the package file ${path} (${(error as NodeJS.ErrnoException).code})` };
  }
  try {
    if (fileStamp(await handle.stat({ bigint: true })) !== stamp) return changed;
    const hash = createHash('sha256');
    const read = await readStamped(handle, named.size, (bytes) => void hash.update(bytes));
    if (read === 'longer')
      return {
        error: `the package file ${path} holds more than the ${named.size} bytes its size says (a special file?): a package holds only regular files (remove it)`,
      };
    if (read === 'shorter') return changed;
    if (fileStamp(await handle.stat({ bigint: true })) !== stamp) return changed;
    hashedFiles += 1;
    const sha256 = hash.digest('hex');
    if (settled(named)) {
      hashes.delete(path);
      if (hashes.size >= HASHES_KEPT) hashes.delete(hashes.keys().next().value!);
      hashes.set(path, { stamp, sha256 });
    }
    return sha256;
  } catch (error) {
    return { error: `cannot read the package file ${path} (${(error as NodeJS.ErrnoException).code})` };
  } finally {
    await handle.close();
  }
}

/**
 * Reads exactly `size` bytes of `handle` (its stamped size) to `take`, then
 * looks for one more: 'longer' when the file holds more than its size says
 * (it grew, or is not what its stat claims), 'shorter' when it ends before.
 * So no read goes on past what the bounds of PROTOCOL §3 counted.
 */
export async function readStamped(
  handle: FileHandle,
  size: bigint,
  take: (bytes: Buffer) => void | Promise<void>,
): Promise<'exact' | 'longer' | 'shorter'> {
  const buffer = Buffer.allocUnsafe(CHUNK);
  const total = Number(size);
  for (let position = 0; position < total;) {
    const { bytesRead } = await handle.read(buffer, 0, Math.min(CHUNK, total - position), position);
    if (bytesRead === 0) return 'shorter';
    await take(buffer.subarray(0, bytesRead));
    position += bytesRead;
  }
  const { bytesRead } = await handle.read(buffer, 0, 1, total);
  return bytesRead === 0 ? 'exact' : 'longer';
}

/** SHA-256 over one line per entry, in path order: type, mode, path, content hash or target. */
export function treeDigest(entries: readonly PackageEntry[]): string {
  const hash = createHash('sha256');
  for (const entry of entries)
    hash.update(`${entry.type}\0${entry.mode}\0${entry.path}\0${entry.sha256 ?? entry.target ?? ''}\n`);
  return hash.digest('hex');
}

/** The paths that differ between two listings (added, removed or changed), sorted; at most `limit`. */
export function changedPaths(
  before: readonly PackageEntry[] | undefined,
  after: readonly PackageEntry[],
  { limit = 20, modes = true }: { limit?: number; modes?: boolean } = {},
): string[] {
  const key = (entry: PackageEntry) =>
    `${entry.type}\0${modes ? entry.mode : ''}\0${entry.sha256 ?? entry.target ?? ''}`;
  const old = new Map((before ?? []).map((entry) => [entry.path, key(entry)]));
  const now = new Map(after.map((entry) => [entry.path, key(entry)]));
  const paths = new Set<string>();
  for (const [path, value] of now) if (old.get(path) !== value) paths.add(path);
  for (const path of old.keys()) if (!now.has(path)) paths.add(path);
  return [...paths].sort().slice(0, limit);
}

/**
 * The part of `tree` that was reviewed: the entries at the paths of the
 * trusted listing. A file added after trust is not part of it: it is not
 * copied (package-copy.ts), so nothing started from the package's own path
 * loads it; it still passes the owner rule. A reviewed file changed or
 * removed changes this part's digest.
 */
export function reviewedPart(tree: PackageTree, trusted: readonly PackageEntry[]): PackageTree {
  const paths = new Set(trusted.map((entry) => entry.path));
  const entries = tree.entries.filter((entry) => paths.has(entry.path));
  return { digest: treeDigest(entries), entries, stamps: tree.stamps };
}
