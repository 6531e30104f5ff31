// One plugin call through the native spawn helper (spawner.ts): its stdin as frames to the helper,
// the helper's frames for it as stdout, stderr, exit and limits, and its end, bounded here whatever
// the helper does.
import { constants } from 'node:os';
import type { CallProcess, ProcessExit } from './call-process.js';
import { SpawnError } from './call-process.js';
import { H, S, limitNames, stdinLastPayload, thenPayload, type LimitName } from './helper-frames.js';
import { RelayedInput, RelayedOutput } from './relayed-stdio.js';
import { isRunning } from './process-tree.js';

/**
 * How long end() waits for the helper to say the call is over before it asks
 * again, and then before it stops trusting the helper and kills its tree.
 */
export const END_BOUND_MS = 500;

/** What a call needs of its helper: to send it frames, and to kill everything when it fails. */
export interface CallsHelper {
  send(id: number, type: number, payload?: Buffer): void;
  killTree(why: string): void;
}

interface SpawnWaiter {
  resolve: () => void;
  reject: (error: Error) => void;
}

const SIGNAL_NAMES = new Map(Object.entries(constants.signals).map(([name, number]) => [number, name]));

export class HelperCall implements CallProcess {
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
    readonly helper: CallsHelper,
  ) {
    this.started = new Promise((resolve, reject) => (this.#spawned = { resolve, reject }));
    void this.started.catch(() => {}); // the caller awaits it; a failure before that is not unhandled
    this.stdin = new RelayedInput(
      (chunk) => {
        if (this.#lastAfter > 0) {
          helper.send(id, H.stdinLast, stdinLastPayload(this.#lastAfter, chunk));
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
    this.helper.send(this.id, H.then, thenPayload(answers, firstLine, request));
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
