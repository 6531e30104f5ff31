// What the kernel lets one plugin call touch (PROTOCOL §9.5): the Landlock
// paths, the network and the resource limits, from the plugin's policy and the
// call. Read + execute: the package directory and its verified copy, the system directories a
// program needs, its `#!` interpreter's own tree (pyenv, nvm, … under a home
// directory: that tool's directory, not the home), an admin's --allow-read
// paths, and the project root with project.files.read. Write: a private empty
// scratch directory (TMPDIR), removed after the call, and the project root
// only in a project.operate call. Nothing else: not the data directory, not
// $HOME, not another project.
import {
  chmodSync,
  closeSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readSync,
  realpathSync,
  rmSync,
  statSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, isAbsolute, join, sep } from 'node:path';
import { hostUid } from '@switchyard/plugin-sdk/host';
import type { KernelPolicy } from './helper-frames.js';

/** Per-call resource limits (PROTOCOL §11), each a host policy per plugin (`plugin set`). */
export interface ResourceLimits {
  memoryBytes: number;
  cpuMs: number;
  fileSizeBytes: number;
  openFiles: number;
  processes: number;
  /**
   * What one call may write in all to its TMPDIR (a tmpfs of this size, PROTOCOL §11); not an
   * operation's writes to the project root nor --allow-write directories.
   */
  diskBytes: number;
}

export interface CallPolicy {
  network: 'allow' | 'none';
  allowRead: readonly string[];
  allowWrite: readonly string[];
  limits: ResourceLimits;
  /** The project's root when the call may see it (project.files.read); `write` in a project.operate call. */
  project?: { root: string; write: boolean };
}

/** Read-only for every program: its libraries, its runtime's files, the few /etc files a runtime reads. */
const SYSTEM_READ = [
  '/usr',
  '/bin',
  '/sbin',
  '/lib',
  '/lib32',
  '/lib64',
  '/libx32',
  '/opt',
  // not /proc: another process's environ would be readable (Landlock's ptrace rule does not cover it);
  // not /sys/fs/cgroup: every other call's and installation's cgroups are there (a runtime that looks
  // for its memory limit there finds none and goes by the machine's; the kernel still enforces it)
  '/sys/devices/system/cpu',
  '/dev/urandom',
  '/dev/random',
  '/dev/zero',
  '/dev/fd',
  '/etc/ld.so.cache',
  '/etc/ld.so.conf',
  '/etc/ld.so.conf.d',
  '/etc/alternatives',
  '/etc/localtime',
  '/etc/timezone',
  '/etc/ssl',
  '/etc/ca-certificates',
  '/etc/pki',
  '/etc/nsswitch.conf',
  '/etc/passwd',
  '/etc/group',
  '/etc/hosts',
  '/etc/host.conf',
  '/etc/resolv.conf',
  '/etc/gai.conf',
  '/etc/services',
  '/etc/protocols',
  '/etc/mime.types',
  '/etc/os-release',
  '/etc/debian_version',
  '/etc/python3',
  '/etc/node',
];
/** Written by every program that writes anything: the null devices. */
const SYSTEM_WRITE = ['/dev/null', '/dev/full', '/dev/tty'];

let systemRead: string[] | undefined;
let systemWrite: string[] | undefined;

/** The system paths that exist on this host (looked up once: the helper skips a missing read path anyway). */
function systemPaths(): { read: string[]; write: string[] } {
  systemRead ??= withoutAliases(SYSTEM_READ.filter((path) => existsSync(path)));
  systemWrite ??= SYSTEM_WRITE.filter((path) => existsSync(path));
  return { read: systemRead, write: systemWrite };
}

/**
 * Read paths less those that lead beneath another of them (/bin, /lib, /lib64, /sbin and
 * /etc/os-release into /usr on a merged /usr): Landlock's rule is on where a path leads and covers all
 * beneath it, so such a rule grants nothing more, and each rule less is one less the kernel copies
 * into every call's domain. Should one of them stop being such a link, it is only not readable.
 */
function withoutAliases(paths: string[]): string[] {
  const real = paths.map((path) => realpathOr(path));
  const directories = real.filter((path, index) => path === paths[index] && isDirectory(path));
  return paths.filter(
    (_path, index) =>
      !directories.some((directory) => real[index]!.startsWith(directory === '/' ? '/' : `${directory}/`)),
  );
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

const interpreterCache = new Map<string, string[]>();

/**
 * The directories an executable's `#!` chain needs beyond the system ones: for
 * `#!/usr/bin/env python3` whatever `python3` is on PATH, and where it really
 * lives — for a path under a home directory the tool's own directory
 * (/root/.pyenv, ~/.nvm), else the directory above its bin/. Cached per
 * executable path and `identity` (its inode and change time).
 */
export function interpreterPaths(executable: string, fd: number, identity: string, path: string): string[] {
  const key = `${executable}\0${identity}\0${path}`;
  const cached = interpreterCache.get(key);
  if (cached) return cached;
  const found = new Set<string>();
  let program = interpreterOf(fd);
  // A shim is often a script too (pyenv's): follow its #! as well, a few steps at most.
  for (let depth = 0; program && depth < 4; depth++) {
    const resolved = onPath(program, path);
    if (!resolved) break;
    for (const candidate of [resolved, realpathOr(resolved)]) {
      const root = toolRoot(candidate);
      if (root) found.add(root);
    }
    program = interpreterOfPath(realpathOr(resolved));
  }
  const paths = [...found];
  if (interpreterCache.size > 256) interpreterCache.clear();
  interpreterCache.set(key, paths);
  return paths;
}

/**
 * Whether a verified executable is a `#!` script that Node runs (cached under
 * `identity`, the open file's: a changed or other file reads again). The kernel
 * hands a script started from a descriptor to its interpreter as /dev/fd/<n>;
 * Node resolves that to the file's path, which after a swap names other
 * bytes (or `<path> (deleted)`, a name anyone who may write the directory can
 * plant), so such a call gets `--preserve-symlinks-main`: Node then reads the
 * descriptor, the verified file.
 */
export function runByNode(fd: number, identity?: string): boolean {
  const cached = identity === undefined ? undefined : nodeRunCache.get(identity);
  if (cached !== undefined) return cached;
  const program = interpreterOf(fd);
  const byNode = program !== undefined && /^(node|nodejs)$/.test(program.slice(program.lastIndexOf('/') + 1));
  if (identity !== undefined) {
    if (nodeRunCache.size > 256) nodeRunCache.clear();
    nodeRunCache.set(identity, byNode);
  }
  return byNode;
}

/** runByNode's answers by the file's identity (its path, device, inode and change time). */
const nodeRunCache = new Map<string, boolean>();

/** The program a `#!` line starts (env's argument for `#!/usr/bin/env X`), or undefined. */
function interpreterOf(fd: number): string | undefined {
  const head = Buffer.alloc(256);
  const read = readSync(fd, head, 0, head.length, 0);
  const text = head.subarray(0, read).toString('utf8');
  if (!text.startsWith('#!')) return undefined;
  const words = text.slice(2).split('\n')[0]!.trim().split(/\s+/);
  const interpreter = words[0];
  if (!interpreter) return undefined;
  if (interpreter.endsWith('/env'))
    return words.slice(1).find((word) => !word.startsWith('-') && !word.includes('='));
  return interpreter;
}

function interpreterOfPath(file: string): string | undefined {
  let fd: number | undefined;
  try {
    fd = openSync(file, 'r');
    return interpreterOf(fd);
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

function onPath(program: string, path: string): string | undefined {
  if (isAbsolute(program)) return existsSync(program) ? program : undefined;
  for (const dir of path.split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, program);
    if (existsSync(candidate)) return candidate;
  }
  return undefined;
}

function realpathOr(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

/** Where a tool outside the system directories keeps its runtime; undefined for a system path. */
function toolRoot(file: string): string | undefined {
  if (systemPaths().read.some((dir) => file === dir || file.startsWith(dir + sep))) return undefined;
  const home = /^(\/root|\/home\/[^/]+)\/([^/]+)\//.exec(file);
  if (home) return `${home[1]}/${home[2]}`;
  const bin = dirname(file);
  return bin.endsWith('/bin') ? dirname(bin) : bin;
}

/** A call's TMPDIR in its scratch directory: where the helper mounts the call's tmpfs (native/isolate.h). */
export const SCRATCH_TMP = 'tmp';

export function scratchTmp(scratch: string): string {
  return join(scratch, SCRATCH_TMP);
}

/**
 * Private, empty directories for calls' temporary files, kept for the next call
 * once emptied: each holds `tmp`, the call's TMPDIR, on which an isolated call
 * gets its tmpfs (the Landlock write rule is on the scratch directory above it,
 * read-only in the call's mount namespace: isolate.h says why). The path a call gets is then one of a few,
 * so the helper's cached Landlock ruleset for a plugin fits every call, and no
 * directory is made and removed per call. Released only after every process of
 * the call is gone; emptied, made 0700 again (a plugin may have chmod-ed it)
 * and checked to be this user's own directory, else dropped.
 */
class ScratchPool {
  readonly #free: string[] = [];
  readonly #all = new Set<string>();
  /** Directories scratchAtFileLimit found empty once their call was over: release need not list them again. */
  readonly #seenEmpty = new Set<string>();

  acquire(): { path: string; release: () => void } {
    const path = this.#free.pop() ?? this.#make();
    this.#seenEmpty.delete(path);
    return { path, release: () => this.#release(path) };
  }

  /** Said by scratchAtFileLimit, which looks only once nothing of the call runs. */
  sawEmpty(path: string): void {
    if (this.#all.has(path)) this.#seenEmpty.add(path);
  }

  #make(): string {
    const path = mkdtempSync(join(tmpdir(), 'sy-call-'));
    if (this.#all.size === 0) process.once('exit', () => this.removeAll());
    this.#all.add(path);
    mkdirSync(scratchTmp(path), { mode: 0o700 });
    return path;
  }

  #release(path: string): void {
    try {
      // Listed already when the call's file-size check found it empty (no readdir here, per call).
      const emptied = this.#empty(path, this.#seenEmpty.delete(path));
      // chmod only a directory of ours whose mode the call changed (never through a symlink):
      // one system call less on every usual call.
      let stats = lstatSync(path);
      if (stats.isDirectory() && stats.uid === hostUid() && (stats.mode & 0o7777) !== 0o700) {
        chmodSync(path, 0o700);
        stats = lstatSync(path);
      }
      const own =
        stats.isDirectory() && stats.uid === hostUid() && (stats.mode & 0o7777) === 0o700 && emptied;
      if (own && this.#free.length < 64) return void this.#free.push(path);
    } catch {
      // not emptied (an immutable file, a vanished directory): not used again
    }
    this.#all.delete(path);
    try {
      rmSync(path, { recursive: true, force: true, maxRetries: 0 });
    } catch (error) {
      // Released in the call's finally: the call's own result or error must stand. Left where it is.
      process.stderr.write(
        `switchyard: scratch directory ${path} could not be removed (${(error as Error).message}); left in place, not used again\n`,
      );
    }
  }

  /**
   * Everything in the scratch directory gone but its `tmp`, a directory of ours, empty and 0700 (made
   * again when the call replaced it). True when that is so.
   */
  #empty(path: string, seenEmpty: boolean): boolean {
    let removed = false;
    for (const name of seenEmpty ? [] : readdirSync(path)) {
      if (name === SCRATCH_TMP) continue;
      rmSync(join(path, name), { recursive: true, force: true });
      removed = true;
    }
    const tmp = scratchTmp(path);
    let stats = lstatSync(tmp, { throwIfNoEntry: false });
    if (!stats?.isDirectory() || stats.uid !== hostUid()) {
      rmSync(tmp, { recursive: true, force: true });
      mkdirSync(tmp, { mode: 0o700 });
      stats = lstatSync(tmp);
    }
    for (const name of seenEmpty ? [] : readdirSync(tmp)) {
      rmSync(join(tmp, name), { recursive: true, force: true });
      removed = true;
    }
    if ((stats.mode & 0o7777) !== 0o700) chmodSync(tmp, 0o700);
    // What could not be removed (an immutable file) is still there: not used again.
    return !removed || (readdirSync(path).length === 1 && readdirSync(tmp).length === 0);
  }

  removeAll(): void {
    for (const path of this.#all) rmSync(path, { recursive: true, force: true, maxRetries: 0 });
    this.#all.clear();
    this.#free.length = 0;
  }
}

const scratchPool = new ScratchPool();

/** A private, empty directory for one call's temporary files (its TMPDIR), given back by `release`. */
export function scratchDirectory(): { path: string; release: () => void } {
  return scratchPool.acquire();
}

/**
 * Whether a file in the scratch directory reached the file-size limit. A
 * runtime that ignores SIGXFSZ (Node does) only sees EFBIG, and the kernel's
 * signal never tells the keeper; the file left at the limit does. Looks at
 * most at `budget` entries (an empty directory, the usual case, costs one readdir).
 * Called once nothing of the call runs: a scratch directory it finds empty is
 * not listed again when it is released.
 */
export function scratchAtFileLimit(dir: string, limitBytes: number, budget = 1_000): boolean {
  const pending = [dir];
  let seen = 0;
  // Nothing in it but its empty tmp (the usual call), so far.
  let empty = true;
  while (pending.length > 0 && seen < budget) {
    const current = pending.pop()!;
    let entries;
    try {
      entries = readdirSync(current, { withFileTypes: true });
    } catch {
      empty = false;
      continue;
    }
    if (current === dir)
      empty = entries.length === 1 && entries[0]!.name === SCRATCH_TMP && entries[0]!.isDirectory();
    else if (entries.length > 0) empty = false;
    for (const entry of entries) {
      if (++seen > budget) break;
      const path = join(current, entry.name);
      if (entry.isDirectory()) pending.push(path);
      else if (entry.isFile()) {
        try {
          if (statSync(path).size >= limitBytes) return true;
        } catch {
          // gone meanwhile
        }
      }
    }
  }
  if (empty && pending.length === 0) scratchPool.sawEmpty(dir);
  return false;
}

/**
 * Policies already built, by everything that goes into one: a plugin's calls get the same object call
 * after call, so the spawn helper's client encodes it once (helper-frames.ts) instead of ~40 paths per call.
 */
const builtPolicies = new Map<string, KernelPolicy>();

/** The helper's policy for one call (frozen: one object serves every call of the same policy). */
export function kernelPolicyOf(
  policy: CallPolicy,
  call: { packageDir: string; packageCopy?: string; interpreter: readonly string[]; scratch: string },
): KernelPolicy {
  // An admin's write path this host lacks is skipped, like a missing read path (worker
  // hosts differ); the scratch directory and an operated project must exist.
  const allowWrite = policy.allowWrite.filter((path) => existsSync(path));
  const { limits, project } = policy;
  const key = JSON.stringify([
    policy.network,
    call.packageDir,
    call.packageCopy,
    call.scratch,
    project ? [project.write, project.root] : null,
    [
      limits.memoryBytes,
      limits.cpuMs,
      limits.fileSizeBytes,
      limits.openFiles,
      limits.processes,
      limits.diskBytes,
    ],
    call.interpreter,
    policy.allowRead,
    allowWrite,
  ]);
  const built = builtPolicies.get(key);
  if (built) return built;
  const system = systemPaths();
  // The package directory stays readable: it is the call's working directory.
  const copy = call.packageCopy === undefined ? [] : [call.packageCopy];
  const read = [...system.read, call.packageDir, ...copy, ...call.interpreter, ...policy.allowRead];
  const write = [...system.write, call.scratch, ...allowWrite];
  if (project) (project.write ? write : read).push(project.root);
  const kernel: KernelPolicy = Object.freeze({
    files: Object.freeze({ read: Object.freeze(read), write: Object.freeze(write) }),
    network: policy.network,
    limits: Object.freeze({
      memoryBytes: limits.memoryBytes,
      // RLIMIT_CPU counts whole seconds.
      cpuSeconds: Math.max(1, Math.ceil(limits.cpuMs / 1_000)),
      fileSizeBytes: limits.fileSizeBytes,
      openFiles: limits.openFiles,
      processes: limits.processes,
      diskBytes: limits.diskBytes,
    }),
    tmp: scratchTmp(call.scratch),
  });
  if (builtPolicies.size >= 512) builtPolicies.clear();
  builtPolicies.set(key, kernel);
  return kernel;
}
