// Client of the native spawn helper (native/spawner.c, built to
// dist/native/sy-spawner): one long-lived helper per process, started on the
// first call, multiplexing every concurrent plugin call over its stdin/stdout
// in compact frames. The helper starts each plugin under a per-call child
// subreaper, so everything the plugin starts (setsid, double fork, orphans)
// dies with the call, and all of it dies with this process.
import { spawn, type ChildProcess } from 'node:child_process';
import type { Socket } from 'node:net';
import { constants } from 'node:os';
import { Readable, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';

/** Same location from src/core (tests) and dist/core (the built host). */
export const HELPER_PATH = fileURLToPath(new URL('../../../dist/native/sy-spawner', import.meta.url));

const HEADER = 9;
const H = { spawn: 1, stdin: 2, stdinClose: 3, kill: 4 } as const;
const S = {
  spawned: 1,
  failed: 2,
  stdout: 3,
  stderr: 4,
  stdoutEof: 5,
  stderrEof: 6,
  exit: 7,
  done: 8,
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
}

/** One plugin process, whichever mechanism starts it. */
export interface CallProcess {
  /** Resolves once the process runs (pid set); rejects with SpawnError when it cannot start. */
  started: Promise<void>;
  /** Set once started. */
  pid: number;
  stdin: Writable;
  stdout: Readable;
  stderr: Readable;
  /** The leader's exit (code or signal name). */
  exited: Promise<ProcessExit>;
  /** Kills every process of the call; resolves once none of them runs. */
  end(): Promise<void>;
}

export class SpawnError extends Error {}

interface SpawnWaiter {
  resolve: () => void;
  reject: (error: Error) => void;
}

const SIGNAL_NAMES = new Map(Object.entries(constants.signals).map(([name, number]) => [number, name]));

class HelperCall implements CallProcess {
  pid = 0;
  readonly stdout = new Readable({ read() {} });
  readonly stderr = new Readable({ read() {} });
  readonly stdin: Writable;
  readonly exited: Promise<ProcessExit>;
  readonly done: Promise<void>;
  readonly started: Promise<void>;
  isDone = false;
  #hasExited = false;
  #resolveExit!: (exit: ProcessExit) => void;
  #resolveDone!: () => void;
  #spawned: SpawnWaiter | undefined;

  constructor(
    readonly id: number,
    readonly helper: Spawner,
  ) {
    this.started = new Promise((resolve, reject) => (this.#spawned = { resolve, reject }));
    void this.started.catch(() => {}); // the caller awaits it; a failure before that is not unhandled
    this.stdin = new Writable({
      write: (chunk: Buffer, _encoding, callback) => {
        helper.send(id, H.stdin, chunk);
        callback();
      },
      final: (callback) => {
        helper.send(id, H.stdinClose);
        callback();
      },
    });
    this.exited = new Promise((resolve) => (this.#resolveExit = resolve));
    this.done = new Promise((resolve) => (this.#resolveDone = resolve));
  }

  end(): Promise<void> {
    // Once the leader has exited the keeper already kills what is left and ends
    // the call by itself (native/keeper.c): no KILL frame, no SIGTERM to send.
    if (!this.isDone && !this.#hasExited) this.helper.send(this.id, H.kill);
    return this.done;
  }

  receive(type: number, payload: Buffer): void {
    switch (type) {
      case S.spawned:
        this.pid = payload.readUInt32LE(0);
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
        this.stdout.push(null);
        break;
      case S.stderrEof:
        this.stderr.push(null);
        break;
      case S.exit: {
        const code = payload.readInt32LE(0);
        const signal = payload.readInt32LE(4);
        this.#hasExited = true;
        this.#resolveExit({ code: code < 0 ? null : code, signal: SIGNAL_NAMES.get(signal) ?? null });
        break;
      }
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
    if (!this.stdout.readableEnded) this.stdout.push(null);
    if (!this.stderr.readableEnded) this.stderr.push(null);
    this.#resolveExit({ code: null, signal: null });
    this.#resolveDone();
  }
}

export class Spawner {
  readonly #child: ChildProcess;
  readonly #calls = new Map<number, HelperCall>();
  readonly started: Promise<void>;
  #nextId = 1;
  #rest: Buffer = Buffer.alloc(0);
  #outgoing: Buffer[] = [];
  #exited = false;

  constructor(path: string, onExit: (spawner: Spawner) => void) {
    this.#child = spawn(path, [], { stdio: ['pipe', 'pipe', 'inherit'] });
    this.started = new Promise((resolve, reject) => {
      this.#child.once('spawn', () => resolve());
      this.#child.once('error', reject);
    });
    void this.started.catch(() => {});
    this.#child.stdin!.on('error', () => {});
    this.#child.stdout!.on('data', (chunk: Buffer) => this.#receive(chunk));
    this.#child.once('close', () => {
      this.#exited = true;
      onExit(this);
      for (const call of this.#calls.values()) call.finish('the spawn helper exited');
      this.#calls.clear();
    });
    this.#idle();
  }

  /**
   * Asks the helper to start a call and returns it at once, before it runs:
   * what is written to its stdin in the same tick leaves with the request in
   * one write (the host's initialize needs no round trip for the pid first).
   * `started` says when it runs, or why it could not start.
   */
  async spawn(request: SpawnRequest): Promise<CallProcess> {
    await this.started;
    if (this.#exited) throw new SpawnError('the spawn helper exited');
    const id = this.#nextId++;
    const frame = encodeSpawn(request);
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

/** u32 argc, u32 envc, then NUL-terminated path, cwd, argv (argv[0] = path) and NAME=value entries. */
function encodeSpawn(request: SpawnRequest): Buffer {
  const argv = [request.file, ...request.args];
  const env = Object.entries(request.env).map(([name, value]) => `${name}=${value}`);
  const strings = [request.file, request.cwd, ...argv, ...env];
  for (const text of strings) {
    if (text.includes('\0')) throw new SpawnError('an argument or environment value holds a NUL byte');
  }
  const body = Buffer.from(`${strings.join('\0')}\0`, 'utf8');
  const head = Buffer.allocUnsafe(8);
  head.writeUInt32LE(argv.length, 0);
  head.writeUInt32LE(env.length, 4);
  return Buffer.concat([head, body]);
}
