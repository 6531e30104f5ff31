// docs/PROTOCOL.md §3 ownership and file types, as OpenSSH's StrictModes: a file
// the host verifies and then starts by path is only as safe as every name on
// that path. Each directory in which a name is looked up, every symlink
// followed on the way and the files themselves must be owned by root or by
// the user the host runs as, and no such directory may be group- or
// world-writable; otherwise another local user could swap the file between its
// verification and its start. A sticky directory above the package (/tmp) is
// fine: others may add entries there but not replace ours. The package
// directory and every directory holding the executable or plugin.json may not
// be writable by others even when sticky: a file added next to the plugin (a
// module it imports) runs as the host's user too.
import type { BigIntStats, Stats } from 'node:fs';
import { lstat, readFile, readlink } from 'node:fs/promises';
import { dirname, isAbsolute, join, parse, resolve, sep } from 'node:path';

type AnyStats = Stats | BigIntStats;

/** What a file is, in words, for errors that refuse anything but a regular file. */
export function fileKind(stats: AnyStats): string {
  if (stats.isFile()) return 'a regular file';
  if (stats.isDirectory()) return 'a directory';
  if (stats.isSymbolicLink()) return 'a symlink';
  if (stats.isFIFO()) return 'a FIFO (named pipe)';
  if (stats.isSocket()) return 'a socket';
  if (stats.isCharacterDevice()) return 'a character device';
  if (stats.isBlockDevice()) return 'a block device';
  return 'not a regular file';
}

/** The uid the host runs as, read once (a process never changes it here); undefined where the platform has none. */
const HOST_UID = process.getuid?.();

/** The uid the host runs as; undefined where the platform has none (no ownership rule there). */
export function hostUid(): number | undefined {
  return HOST_UID;
}

/**
 * Why `path` may not be trusted for its owner, with the fix; undefined when
 * it is owned by root or by the host's user. `what` names it ("the directory").
 */
export async function ownerProblem(what: string, path: string, stats: AnyStats): Promise<string | undefined> {
  const host = hostUid();
  const owner = Number(stats.uid);
  if (host === undefined || owner === 0 || owner === host) return undefined;
  const [ownerName, hostName] = await Promise.all([userName(owner), userName(host)]);
  const allowed =
    host === 0
      ? 'root (the user the host runs as)'
      : `root or ${ownerLabel(host, hostName)}, the user the host runs as`;
  return (
    `${what} ${path} is owned by ${ownerLabel(owner, ownerName)}, not by ${allowed}: ` +
    `that user could replace the plugin between its verification and its start ` +
    `(fix: chown ${hostName ?? host} ${shellQuote(path)}, or install the package where only you can write)`
  );
}

/**
 * The mode half of the directory rule; the hint is a valid chmod mode.
 * `inPackage`: the directory is the package directory or one inside it, where
 * sticky does not help.
 */
export function writableDirectoryProblem(
  directory: string,
  mode: number,
  inPackage = false,
): string | undefined {
  const sticky = (mode & 0o1000) !== 0;
  if (sticky && !inPackage) return undefined; // others may add entries above the package but not replace ours
  const who = (mode & 0o002) !== 0 ? 'world' : (mode & 0o020) !== 0 ? 'group' : undefined;
  if (!who) return undefined;
  const fix = `chmod ${who === 'world' ? 'o' : 'g'}-w it`;
  if (sticky)
    return `the directory ${directory} is ${who}-writable and sticky (${fix}): in a package, sticky does not stop others from adding files next to the plugin, such as a module it imports`;
  return `the directory ${directory} is ${who}-writable (${fix}): others could replace the plugin between its verification and its start`;
}

/** `directory` is `packageDir` or inside it (both physical, normalised paths). */
export function isInPackage(directory: string, packageDir: string): boolean {
  return (
    directory === packageDir || directory.startsWith(packageDir.endsWith(sep) ? packageDir : packageDir + sep)
  );
}

export interface ResolvedPath {
  /** The physical path `path` names. */
  real: string;
  /** Every directory a name was looked up in on the way, and the final one, with its stats. */
  directories: Map<string, Stats>;
  /** Every symlink followed on the way, with its own (lstat) stats. */
  symlinks: Map<string, Stats>;
}

const MAX_SYMLINKS = 40; // as Linux's path resolution

/**
 * Resolves `path` (a directory) component by component, as the kernel does,
 * recording each directory consulted and each symlink followed — so a symlink
 * anywhere on the way is judged too, not only the directories of the real path.
 */
export async function resolveDirectory(path: string): Promise<ResolvedPath> {
  const absolute = resolve(path);
  // The common case, no symlink and no "..": every prefix is a real directory, lstat-ed at once.
  if (!path.split(/[\\/]/).includes('..')) {
    const prefixes = [absolute];
    for (let parent = dirname(absolute); parent !== prefixes[0]; parent = dirname(parent))
      prefixes.unshift(parent);
    const stats = await Promise.all(prefixes.map((prefix) => lstat(prefix)));
    if (stats.every((entry) => !entry.isSymbolicLink())) {
      return {
        real: absolute,
        directories: new Map(prefixes.map((p, i) => [p, stats[i]!])),
        symlinks: new Map(),
      };
    }
  }
  const directories = new Map<string, Stats>();
  const symlinks = new Map<string, Stats>();
  const root = parse(absolute).root;
  let current = root;
  directories.set(root, await lstat(root));
  // Not normalised: ".." must go up from where a symlink led, as the kernel's does.
  const raw = isAbsolute(path) ? path : `${process.cwd()}${sep}${path}`;
  const pending = raw.slice(root.length).split(sep);
  let followed = 0;
  while (pending.length > 0) {
    const part = pending.shift()!;
    if (part === '' || part === '.') continue;
    if (part === '..') {
      current = dirname(current);
      continue;
    }
    const next = join(current, part);
    const stats = await lstat(next);
    if (stats.isSymbolicLink()) {
      if (++followed > MAX_SYMLINKS)
        throw Object.assign(new Error(`too many symlinks in ${path}`), { code: 'ELOOP' });
      symlinks.set(next, stats);
      const target = await readlink(next);
      if (isAbsolute(target)) current = root;
      pending.unshift(...target.split(sep));
      continue;
    }
    if (!stats.isDirectory())
      throw Object.assign(new Error(`${next} is not a directory`), { code: 'ENOTDIR' });
    current = next;
    directories.set(current, stats);
  }
  return { real: current, directories, symlinks };
}

/**
 * The first ownership or mode problem on a resolved path; undefined when none.
 * Directories at or below `packageDir` (physical) get the stricter mode rule.
 */
export async function pathProblem(resolved: ResolvedPath, packageDir?: string): Promise<string | undefined> {
  for (const [directory, stats] of resolved.directories) {
    const inPackage = packageDir !== undefined && isInPackage(directory, packageDir);
    const problem =
      (await ownerProblem('the directory', directory, stats)) ??
      writableDirectoryProblem(directory, stats.mode, inPackage);
    if (problem) return problem;
  }
  for (const [link, stats] of resolved.symlinks) {
    const problem = await ownerProblem('the symlink', link, stats);
    if (problem) return problem;
  }
  return undefined;
}

let names: Promise<Map<number, string>> | undefined;

/** A user's name from /etc/passwd, read once and only when an error needs it. */
async function userName(uid: number): Promise<string | undefined> {
  names ??= readFile('/etc/passwd', 'utf8').then(
    (text) =>
      new Map(
        text
          .split('\n')
          .map((line) => line.split(':'))
          .filter((fields) => fields.length >= 3 && /^\d+$/.test(fields[2]!))
          .map((fields) => [Number(fields[2]), fields[0]!] as const),
      ),
    () => new Map<number, string>(),
  );
  return (await names).get(uid);
}

function ownerLabel(uid: number, name: string | undefined): string {
  return name === undefined ? `uid ${uid}` : `uid ${uid} (${name})`;
}

function shellQuote(path: string): string {
  return /^[\w@%+=:,./-]+$/.test(path) ? path : `'${path.replaceAll("'", `'\\''`)}'`;
}
