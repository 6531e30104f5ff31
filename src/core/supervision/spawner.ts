// Client of the native spawn helper (native/spawner.c, built to
// dist/native/sy-spawner): one long-lived helper per process, started on the
// first call, multiplexing every concurrent plugin call over its stdin/stdout
// in compact frames (helper-frames.ts), one HelperCall each (helper-call.ts).
// The helper starts each plugin under a per-call child
// subreaper, so everything the plugin starts (setsid, double fork, orphans)
// dies with the call, and all of it dies with this process. The host does
// not take the helper's word for it: a call's end is bounded here, and if the
// helper does not answer (stopped, say) this process kills the helper's whole
// tree itself (killHelperTree).
import { spawn, type ChildProcess } from 'node:child_process';
import type { Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { SpawnError, type CallProcess } from './call-process.js';
import { HelperCall } from './helper-call.js';
import {
  FrameReader,
  H,
  HELPER_EXITS,
  S,
  decodeHello,
  encodeFrame,
  encodeSpawn,
  spawnFlags,
  type LimitName,
  type SpawnRequest,
} from './helper-frames.js';
import { descendantsOf, isRunning, signal } from './process-tree.js';

export { SpawnError, type CallProcess, type ProcessExit } from './call-process.js';
export { END_BOUND_MS } from './helper-call.js';
export {
  HELPER_EXITS,
  LIMIT_NAMES,
  limitNames,
  type KernelPolicy,
  type LimitName,
  type SpawnRequest,
} from './helper-frames.js';
export { isRunning } from './process-tree.js';

/** Same location from src/core (tests) and dist/core (the built host). */
export const HELPER_PATH = fileURLToPath(new URL('../../../dist/native/sy-spawner', import.meta.url));

/** "the spawn helper exited with code 70 (OUT_OF_MEMORY: <its last stderr line>)", or killed by a signal. */
export function helperExitMessage(code: number | null, signal: string | null, lastLine: string): string {
  if (code === null) return `the spawn helper was killed by ${signal ?? 'a signal'}`;
  const said = lastLine ? `: ${lastLine}` : '';
  return `the spawn helper exited with code ${code} (${HELPER_EXITS[code] ?? 'an unknown code'}${said})`;
}

export class Spawner {
  readonly #child: ChildProcess;
  readonly #onExit: (spawner: Spawner) => void;
  readonly #calls = new Map<number, HelperCall>();
  readonly started: Promise<void>;
  #nextId = 1;
  readonly #frames = new FrameReader();
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
    const frame = encodeSpawn(request, spawnFlags(request, this.isolation), policy);
    const call = new HelperCall(id, this);
    this.#calls.set(id, call);
    if (this.#calls.size === 1) this.#busy();
    this.send(id, H.spawn, frame);
    return call;
  }

  send(id: number, type: number, payload?: Buffer): void {
    if (this.#exited) return;
    const frame = encodeFrame(id, type, payload);
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
    this.#frames.push(chunk, (id, type, payload) => {
      if (id === 0 && type === S.hello) {
        const hello = decodeHello(payload);
        this.landlockAbi = hello.landlockAbi;
        this.seccomp = hello.seccomp;
        this.enforceableLimits = hello.enforceableLimits;
        this.isolation = this.enforceableLimits.includes('disk');
        this.#hello();
      }
      const call = this.#calls.get(id);
      if (call) {
        call.receive(type, payload);
        if (type === S.done) {
          this.#calls.delete(id);
          if (this.#calls.size === 0) this.#idle();
        }
      }
    });
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
