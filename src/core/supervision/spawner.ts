// Client of the native spawn helper (native/spawner.c, built to
// dist/native/sy-spawner): one long-lived helper per process, started on the
// first call, multiplexing every concurrent plugin call over its stdin/stdout
// in compact frames. The helper starts each plugin under a per-call child
// subreaper, so everything the plugin starts (setsid, double fork, orphans)
// dies with the call, and all of it dies with this process. The host does
// not take the helper's word for it: a call's end is bounded here, and if the
// helper does not answer (stopped, say) this process kills the helper's whole
// tree itself (killHelperTree).
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import type { Socket } from 'node:net';
import { constants } from 'node:os';
import { fileURLToPath } from 'node:url';
import { RelayedInput, RelayedOutput, type CallInput, type CallOutput } from './relayed-stdio.js';

/** Same location from src/core (tests) and dist/core (the built host). */
export const HELPER_PATH = fileURLToPath(new URL('../../../dist/native/sy-spawner', import.meta.url));

const HEADER = 9;
const H = { spawn: 1, stdin: 2, stdinClose: 3, kill: 4, stdinLast: 5, then: 6 } as const;
const S = {
  hello: 0,
  spawned: 1,
  failed: 2,
  stdout: 3,
  stderr: 4,
  stdoutEof: 5,
  stderrEof: 6,
  exit: 7,
  done: 8,
  limit: 9,
  sent: 10,
} as const;

export interface ProcessExit {
  code: number | null;
  signal: string | null;
}

export interface SpawnRequest {
  file: string;
  args: readonly string[];
  cwd: string;
  env: Record<string, string>;
  /** Landlock signal scoping for the plugin where the kernel has it (native helper only). */
  confine?: boolean;
  /**
   * A descriptor (of this process) of the verified executable: the helper
   * starts the plugin from it (execveat), argv[0] stays `file` (native helper only).
   */
  executableFd?: number;
  /** Kernel confinement beyond signal scoping (native helper only; needs `confine`). */
  policy?: KernelPolicy | undefined;
  /** Refuse to start when the kernel lacks Landlock or seccomp (worker --require-confinement). */
  requireConfinement?: boolean;
  /**
   * Its own IPC and mount namespaces, and with a policy's `tmp` its tmpfs of `diskBytes`
   * (native/isolate.h); only where the helper said it can (`isolation`), else ignored.
   */
  isolate?: boolean;
}

/** What the keeper applies to one call (native/confine.h, native/limits.h). */
export interface KernelPolicy {
  /** Landlock file rules: read + execute beneath `read`, everything beneath `write`, nothing else. */
  files?: { read: readonly string[]; write: readonly string[] };
  network: 'allow' | 'none';
  limits?: {
    memoryBytes: number;
    cpuSeconds: number;
    fileSizeBytes: number;
    openFiles: number;
    processes: number;
    /** The size of the call's tmpfs on `tmp` (an isolated call). */
    diskBytes: number;
  };
  /** The call's TMPDIR, where an isolated call gets its tmpfs; its parent is the scratch directory. */
  tmp?: string;
}

/** SPAWN flags (native/keeper.h). */
const SPAWN_CONFINE = 1;
const SPAWN_REQUIRE_CONFINEMENT = 2;
const SPAWN_EXEC_FD = 4;
const SPAWN_FILES = 8;
const SPAWN_NO_NETWORK = 16;
const SPAWN_LIMITS = 32;
const SPAWN_ISOLATE = 64;

/** LIMIT_* bits (native/keeper.h): which limit a call hit. */
export const LIMIT_NAMES = { 1: 'memory', 2: 'cpu', 4: 'file size', 8: 'processes', 16: 'disk' } as const;
export type LimitName = (typeof LIMIT_NAMES)[keyof typeof LIMIT_NAMES];

export function limitNames(bits: number): LimitName[] {
  return Object.entries(LIMIT_NAMES)
    .filter(([bit]) => (bits & Number(bit)) !== 0)
    .map(([, name]) => name);
}

/** The helper's exit codes (native/spawner.c, enum helper_exit). */
export const HELPER_EXITS: Readonly<Record<number, string>> = {
  0: 'HOST_GONE',
  65: 'BAD_FRAME',
  70: 'OUT_OF_MEMORY',
  71: 'SETUP_FAILED',
  72: 'POLL_FAILED',
};

/** "the spawn helper exited with code 70 (OUT_OF_MEMORY: <its last stderr line>)", or killed by a signal. */
export function helperExitMessage(code: number | null, signal: string | null, lastLine: string): string {
  if (code === null) return `the spawn helper was killed by ${signal ?? 'a signal'}`;
  const said = lastLine ? `: ${lastLine}` : '';
  return `the spawn helper exited with code ${code} (${HELPER_EXITS[code] ?? 'an unknown code'}${said})`;
}

/**
 * How long end() waits for the helper to say the call is over before it asks
 * again, and then before it stops trusting the helper and kills its tree.
 */
export const END_BOUND_MS = 500;

/** One plugin process, whichever mechanism starts it. */
export interface CallProcess {
  /** Resolves once the process runs (pid set); rejects with SpawnError when it cannot start. */
  started: Promise<void>;
  /** Set once started. */
  pid: number;
  stdin: CallInput;
  stdout: CallOutput;
  stderr: CallOutput;
  /** The leader's exit (code or signal name). */
  exited: Promise<ProcessExit>;
  /** Kills every process of the call; resolves once none of them runs. */
  end(): Promise<void>;
  /** The resource limits the call hit, known once end() resolved (native helper only). */
  limitsHit?: LimitName[];
  /**
   * The next write to stdin is the last: stdin is closed as soon as stdout has
   * given `answers` lines in all, the moment the host would close it on reading
   * the last answer, without a round trip for it (native helper only).
   */
  closeStdinAfterAnswers?(answers: number): void;
  /**
   * `request` is written to stdin, as the last write (see closeStdinAfterAnswers), the moment the
   * plugin's first stdout line is exactly `firstLine`, and never otherwise; `sentAhead` says it was,
   * before that line reaches stdout's reader (native helper only).
   */
  sendAfterFirstLine?(firstLine: Buffer, request: Buffer, answers: number): void;
  readonly sentAhead?: boolean;
}

export class SpawnError extends Error {}

interface SpawnWaiter {
  resolve: () => void;
  reject: (error: Error) => void;
}

const SIGNAL_NAMES = new Map(Object.entries(constants.signals).map(([name, number]) => [number, name]));

class HelperCall implements CallProcess {
  pid = 0;
  /** The call's keeper (native/keeper.c), once started. */
  keeper = 0;
  /** Its keeper serves call after call (native/keeper.h keeper_serve): alive after the call by design. */
  servingKeeper = false;
  readonly stdout = new RelayedOutput();
  readonly stderr = new RelayedOutput();
  readonly stdin: RelayedInput;
  readonly exited: Promise<ProcessExit>;
  readonly done: Promise<void>;
  readonly started: Promise<void>;
  isDone = false;
  limitsHit: LimitName[] = [];
  #hasExited = false;
  #resolveExit!: (exit: ProcessExit) => void;
  #resolveDone!: () => void;
  #spawned: SpawnWaiter | undefined;
  /** Set by closeStdinAfterAnswers until the last write leaves. */
  #lastAfter = 0;
  /** The helper closes stdin (STDIN_LAST was sent): no STDIN_CLOSE from here. */
  #helperCloses = false;

  constructor(
    readonly id: number,
    readonly helper: Spawner,
  ) {
    this.started = new Promise((resolve, reject) => (this.#spawned = { resolve, reject }));
    void this.started.catch(() => {}); // the caller awaits it; a failure before that is not unhandled
    this.stdin = new RelayedInput(
      (chunk) => {
        if (this.#lastAfter > 0) {
          const frame = Buffer.allocUnsafe(4 + chunk.length);
          frame.writeUInt32LE(this.#lastAfter, 0);
          chunk.copy(frame, 4);
          helper.send(id, H.stdinLast, frame);
          this.#lastAfter = 0;
          this.#helperCloses = true;
        } else helper.send(id, H.stdin, chunk);
      },
      () => {
        if (!this.#helperCloses) helper.send(id, H.stdinClose);
      },
    );
    this.exited = new Promise((resolve) => (this.#resolveExit = resolve));
    this.done = new Promise((resolve) => (this.#resolveDone = resolve));
  }

  closeStdinAfterAnswers(answers: number): void {
    this.#lastAfter = answers;
  }

  sentAhead = false;

  sendAfterFirstLine(firstLine: Buffer, request: Buffer, answers: number): void {
    const frame = Buffer.allocUnsafe(8 + firstLine.length + request.length);
    frame.writeUInt32LE(answers, 0);
    frame.writeUInt32LE(firstLine.length, 4);
    firstLine.copy(frame, 8);
    request.copy(frame, 8 + firstLine.length);
    this.helper.send(this.id, H.then, frame);
  }

  async end(): Promise<void> {
    // Once the leader has exited the keeper already kills what is left and ends
    // the call by itself (native/keeper.c): no KILL frame to send.
    if (!this.isDone && !this.#hasExited) this.helper.send(this.id, H.kill);
    // Over already (the usual case once the exit was read): no timer and promise race for it.
    if (!this.isDone && !(await settlesWithin(this.done, END_BOUND_MS))) {
      // The keeper may be stopped, or gone with the leader still running: the helper kills both on KILL.
      this.helper.send(this.id, H.kill);
      if (!(await settlesWithin(this.done, 2 * END_BOUND_MS))) {
        this.helper.killTree(`the spawn helper did not end call ${this.id} within ${3 * END_BOUND_MS} ms`);
      }
    }
    // Checked, not assumed: the leader and the keeper must be gone before the call counts as over.
    // A serving keeper lives on for its slot's next call (native/keeper.h keeper_serve).
    if ([this.pid, this.servingKeeper ? 0 : this.keeper].some((pid) => pid > 0 && isRunning(pid))) {
      this.helper.killTree(`call ${this.id} reported over while its leader or keeper still runs`);
    }
  }

  receive(type: number, payload: Buffer): void {
    switch (type) {
      case S.spawned:
        this.pid = payload.readUInt32LE(0);
        if (payload.length >= 8) this.keeper = payload.readUInt32LE(4);
        this.servingKeeper = payload.length >= 12 && payload.readUInt32LE(8) === 1;
        this.#spawned?.resolve();
        this.#spawned = undefined;
        break;
      case S.failed:
        this.#spawned?.reject(new SpawnError(payload.subarray(4).toString('utf8')));
        this.#spawned = undefined;
        break;
      case S.stdout:
        this.stdout.push(payload);
        break;
      case S.stderr:
        this.stderr.push(payload);
        break;
      case S.stdoutEof:
        this.stdout.end();
        break;
      case S.stderrEof:
        this.stderr.end();
        break;
      case S.exit: {
        const code = payload.readInt32LE(0);
        const signal = payload.readInt32LE(4);
        this.#hasExited = true;
        this.#resolveExit({ code: code < 0 ? null : code, signal: SIGNAL_NAMES.get(signal) ?? null });
        break;
      }
      case S.limit:
        this.limitsHit = limitNames(payload.readUInt32LE(0));
        break;
      case S.sent:
        this.sentAhead = true;
        this.#helperCloses = true; // as after STDIN_LAST
        break;
      case S.done:
        this.finish('the plugin exited before it started');
        break;
    }
  }

  /** Nothing of the call runs any more (or the helper is gone, taking the call with it). */
  finish(spawnFailure: string): void {
    this.isDone = true;
    // The error (and its stack trace) only when a spawn is still waiting: not on every call's end.
    this.#spawned?.reject(new SpawnError(spawnFailure));
    this.#spawned = undefined;
    this.stdout.end();
    this.stderr.end();
    this.#resolveExit({ code: null, signal: null });
    this.#resolveDone();
  }
}

export class Spawner {
  readonly #child: ChildProcess;
  readonly #onExit: (spawner: Spawner) => void;
  readonly #calls = new Map<number, HelperCall>();
  readonly started: Promise<void>;
  #nextId = 1;
  #rest: Buffer = Buffer.alloc(0);
  #outgoing: Buffer[] = [];
  #exited = false;
  /** The kernel's Landlock ABI as the helper found it (0: none); undefined until the helper said. */
  landlockAbi: number | undefined;
  /** Whether the helper can install its seccomp filter; undefined until it said. */
  seccomp: boolean | undefined;
  /** LIMIT_* bits the helper can enforce on this host. */
  enforceableLimits: LimitName[] | undefined;
  /** The helper can isolate calls (LIMIT_DISK in HELLO: per-call namespaces and a tmpfs, native/isolate.h). */
  isolation = false;
  /**
   * Settles once the helper said HELLO (or is gone): a call asked before that would not know
   * whether it can be isolated, and would silently go without its namespaces.
   */
  readonly #said: Promise<void>;
  #hello: () => void = () => {};
  /** Why the helper is gone, once it is (its exit code by name and its last stderr line). */
  exitMessage: string | undefined;

  /**
   * `filter`: the seccomp filter the helper installs on itself once, for every call it starts
   * (`none`: no network; `allow`: network allowed); without it each confined call installs its
   * own, a cost of tens of microseconds per call (docs/benchmarks/confinement.md).
   */
  constructor(path: string, onExit: (spawner: Spawner) => void, filter?: 'none' | 'allow') {
    this.#onExit = onExit;
    this.#child = spawn(path, filter ? ['--filter', filter] : [], { stdio: ['pipe', 'pipe', 'pipe'] });
    // Its one-line diagnostic goes on to this process's stderr and into the error of every call it ends.
    let lastLine = '';
    this.#child.stderr!.setEncoding('utf8').on('data', (text: string) => {
      process.stderr.write(text);
      lastLine = text.trim().split('\n').pop()!.slice(0, 500) || lastLine;
    });
    (this.#child.stderr as Socket | null)?.unref?.(); // never what keeps this process alive
    this.started = new Promise((resolve, reject) => {
      this.#child.once('spawn', () => resolve());
      this.#child.once('error', reject);
    });
    void this.started.catch(() => {});
    this.#said = new Promise((resolve) => (this.#hello = resolve));
    this.#child.stdin!.on('error', () => {});
    this.#child.stdout!.on('data', (chunk: Buffer) => this.#receive(chunk));
    this.#child.once('close', (code: number | null, signal: NodeJS.Signals | null) => {
      if (this.#exited) return;
      this.#exited = true;
      this.exitMessage = helperExitMessage(code, signal, lastLine);
      this.#hello();
      onExit(this);
      for (const call of this.#calls.values()) call.finish(this.exitMessage);
      this.#calls.clear();
    });
    // Kept alive until the helper said HELLO (a call may be waiting for it: nothing else holds the
    // event loop meanwhile), idle from then on while no call is in flight.
    void this.#said.then(() => {
      if (this.#calls.size === 0) this.#idle();
    });
  }

  /**
   * Asks the helper to start a call and returns it at once, before it runs:
   * what is written to its stdin in the same tick leaves with the request in
   * one write (the host's initialize needs no round trip for the pid first).
   * `started` says when it runs, or why it could not start.
   */
  async spawn(request: SpawnRequest): Promise<CallProcess> {
    await this.started;
    await this.#said;
    if (this.#exited) throw new SpawnError(this.exitMessage ?? 'the spawn helper exited');
    const id = this.#nextId++;
    const policy = request.confine ? request.policy : undefined;
    const frame = encodeSpawn(
      request,
      (request.confine ? SPAWN_CONFINE : 0) |
        (request.confine && request.requireConfinement ? SPAWN_REQUIRE_CONFINEMENT : 0) |
        (request.executableFd === undefined ? 0 : SPAWN_EXEC_FD) |
        (policy?.files ? SPAWN_FILES : 0) |
        (policy?.network === 'none' ? SPAWN_NO_NETWORK : 0) |
        (policy?.limits ? SPAWN_LIMITS : 0) |
        (request.confine && request.isolate && this.isolation ? SPAWN_ISOLATE : 0),
      policy,
    );
    const call = new HelperCall(id, this);
    this.#calls.set(id, call);
    if (this.#calls.size === 1) this.#busy();
    this.send(id, H.spawn, frame);
    return call;
  }

  send(id: number, type: number, payload?: Buffer): void {
    if (this.#exited) return;
    const length = payload?.length ?? 0;
    const frame = Buffer.allocUnsafe(HEADER + length);
    frame.writeUInt32LE(length, 0);
    frame.writeUInt32LE(id, 4);
    frame[8] = type;
    payload?.copy(frame, HEADER);
    // Frames of one tick (several calls, or SPAWN + stdin) leave in one write: one syscall, one wake-up.
    this.#outgoing.push(frame);
    if (this.#outgoing.length === 1) process.nextTick(this.#flush);
  }

  readonly #flush = (): void => {
    const frames = this.#outgoing;
    this.#outgoing = [];
    if (this.#exited || frames.length === 0) return;
    this.#child.stdin!.write(frames.length === 1 ? frames[0]! : Buffer.concat(frames));
  };

  #receive(chunk: Buffer): void {
    let data = this.#rest.length > 0 ? Buffer.concat([this.#rest, chunk]) : chunk;
    let at = 0;
    while (data.length - at >= HEADER) {
      const length = data.readUInt32LE(at);
      if (data.length - at < HEADER + length) break;
      const id = data.readUInt32LE(at + 4);
      const type = data[at + 8]!;
      const call = this.#calls.get(id);
      if (id === 0 && type === S.hello) {
        this.landlockAbi = data.readUInt32LE(at + HEADER);
        this.seccomp = length >= 8 && data.readUInt32LE(at + HEADER + 4) === 1;
        this.enforceableLimits = length >= 12 ? limitNames(data.readUInt32LE(at + HEADER + 8)) : [];
        this.isolation = this.enforceableLimits.includes('disk');
        this.#hello();
      }
      if (call) {
        call.receive(type, data.subarray(at + HEADER, at + HEADER + length));
        if (type === S.done) {
          this.#calls.delete(id);
          if (this.#calls.size === 0) this.#idle();
        }
      }
      at += HEADER + length;
    }
    data = data.subarray(at);
    this.#rest = data;
  }

  /**
   * The helper did not do its job (stopped, or it let a call's process live):
   * SIGKILL every process under it, repeatedly until none is left (what a dead
   * keeper leaves is re-parented to the helper, a subreaper, even when it is
   * stopped), then the helper itself. Every call in flight fails with it.
   */
  killTree(why: string): void {
    if (this.#exited) return;
    const helper = this.#child.pid;
    if (helper === undefined) return;
    for (let round = 0; round < 50; round++) {
      const descendants = descendantsOf(helper).filter(isRunning);
      if (descendants.length === 0) break;
      for (const pid of descendants) signal(pid, 'SIGKILL');
    }
    signal(helper, 'SIGKILL');
    this.#exited = true;
    this.#onExit(this);
    for (const call of this.#calls.values()) call.finish(`${why}; its processes were killed`);
    this.#calls.clear();
    this.#idle();
  }

  /** With no call in flight the helper must not keep this process alive. */
  #idle(): void {
    this.#child.unref();
    (this.#child.stdin as Socket | null)?.unref?.();
    (this.#child.stdout as Socket | null)?.unref?.();
  }

  #busy(): void {
    this.#child.ref();
    (this.#child.stdin as Socket | null)?.ref?.();
    (this.#child.stdout as Socket | null)?.ref?.();
  }
}

/**
 * u32 argc, u32 envc, u32 flags, u32 policyc, then NUL-terminated path, cwd,
 * argv (argv[0] = path), NAME=value entries and the policy's entries.
 */
function encodeSpawn(request: SpawnRequest, flags: number, policy: KernelPolicy | undefined): Buffer {
  const argv = [request.file, ...request.args];
  const env = Object.entries(request.env).map(([name, value]) => `${name}=${value}`);
  // By descriptor: the helper (this process's child, same user) reopens it through /proc: the same open file.
  const path =
    request.executableFd === undefined ? request.file : `/proc/${process.pid}/fd/${request.executableFd}`;
  const entries = encodedPolicy(policy);
  const strings = [path, request.cwd, ...argv, ...env];
  for (const text of strings) {
    if (text.includes('\0')) throw new SpawnError('an argument or environment value holds a NUL byte');
  }
  const body = Buffer.from(`${strings.join('\0')}\0`, 'utf8');
  const head = Buffer.allocUnsafe(16);
  head.writeUInt32LE(argv.length, 0);
  head.writeUInt32LE(env.length, 4);
  head.writeUInt32LE(flags, 8);
  head.writeUInt32LE(entries.count, 12);
  return Buffer.concat([head, body, entries.bytes]);
}

/** A policy's entries encoded once per policy object (call-policy.ts hands the same one to a plugin's calls). */
const encodedPolicies = new WeakMap<KernelPolicy, { bytes: Buffer; count: number }>();
const NO_POLICY = { bytes: Buffer.alloc(0), count: 0 };

function encodedPolicy(policy: KernelPolicy | undefined): { bytes: Buffer; count: number } {
  if (!policy) return NO_POLICY;
  let encoded = encodedPolicies.get(policy);
  if (!encoded) {
    const entries = policyEntries(policy);
    if (entries.some((text) => text.includes('\0')))
      throw new SpawnError('an argument or environment value holds a NUL byte');
    encoded = {
      bytes: Buffer.from(entries.map((entry) => `${entry}\0`).join(''), 'utf8'),
      count: entries.length,
    };
    // Only a frozen policy cannot change after it was encoded.
    if (Object.isFrozen(policy)) encodedPolicies.set(policy, encoded);
  }
  return encoded;
}

function policyEntries(policy: KernelPolicy): string[] {
  const entries = [
    ...(policy.files?.read ?? []).map((path) => `read=${path}`),
    ...(policy.files?.write ?? []).map((path) => `write=${path}`),
  ];
  const limits = policy.limits;
  if (limits) {
    entries.push(
      `memory=${limits.memoryBytes}`,
      `cpu=${limits.cpuSeconds}`,
      `fsize=${limits.fileSizeBytes}`,
      `nofile=${limits.openFiles}`,
      `nproc=${limits.processes}`,
      `disk=${limits.diskBytes}`,
    );
  }
  if (policy.tmp) entries.push(`tmp=${policy.tmp}`);
  return entries;
}

/** True once `promise` settles within `ms`; no timer outlives it. */
async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([promise.then(() => true), bound]);
  } finally {
    clearTimeout(timer);
  }
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // ESRCH: gone already
  }
}

/** /proc/<pid>/stat: neither gone nor a zombie. */
export function isRunning(pid: number): boolean {
  // existsSync first: no exception (the costly part) for the usual answer, gone.
  if (!existsSync(`/proc/${pid}`)) return false;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    const state = stat[stat.lastIndexOf(')') + 2];
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
}

/** Every descendant of `pid` by /proc/<pid>/task/<tid>/children, parents before children. */
function descendantsOf(pid: number): number[] {
  const found: number[] = [];
  const queue = [pid];
  while (queue.length > 0) {
    const parent = queue.shift()!;
    let tasks: string[];
    try {
      tasks = readdirSync(`/proc/${parent}/task`);
    } catch {
      continue;
    }
    for (const task of tasks) {
      let children = '';
      try {
        children = readFileSync(`/proc/${parent}/task/${task}/children`, 'latin1');
      } catch {
        continue;
      }
      for (const child of children.split(' ').filter(Boolean).map(Number)) {
        found.push(child);
        queue.push(child);
      }
    }
  }
  return found;
}
