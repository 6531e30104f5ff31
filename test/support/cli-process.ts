// The built CLI (`node dist/cli/main.js <args>`) as a real subprocess, shared
// by the api, cli, queue and browser tests: stdout and stderr captured, the
// exit tracked, and every process remembered by the tracker that started it
// so a failed test cannot leak one into the next.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { REPO } from './data-dir.js';

export const CLI = join(REPO, 'dist', 'cli', 'main.js');

/** Fails early, with the fix, when the CLI has not been built. */
export function requireBuiltCli(): void {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing; run \`npm run build\` first`);
}

/** The global options that point the CLI at an installation. */
export interface Target {
  dataDir: string;
  redisUrl?: string;
  prefix?: string;
}

export function globalArgs(target: Target): string[] {
  return [
    '--data-dir',
    target.dataDir,
    ...(target.redisUrl ? ['--redis-url', target.redisUrl] : []),
    ...(target.prefix ? ['--prefix', target.prefix] : []),
  ];
}

export interface ExitStatus {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface CliProcess {
  child: ChildProcess;
  pid: number;
  /** stdout and stderr interleaved as they came; of a long run only the last 100–200 k characters. */
  output(): string;
  stdout(): string;
  stderr(): string;
  /** The process exited (its output may not all be read yet). */
  exited: Promise<ExitStatus>;
  /** The process exited and its stdout and stderr were read to the end. */
  closed: Promise<ExitStatus>;
  running(): boolean;
}

export interface SpawnOptions {
  /**
   * In its own process group (so the whole tree can be killed), in the repo,
   * with an environment without SWITCHYARD_* and FORCE_COLOR, so only the
   * flags decide. Otherwise it inherits all of those from the test.
   */
  isolated?: boolean;
  /** Set in its environment on top of the above (e.g. a test's short interval). */
  env?: Record<string, string>;
}

/** Environment without SWITCHYARD_* from the caller, and without colour. */
function cleanEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env))
    if (!key.startsWith('SWITCHYARD_') && key !== 'FORCE_COLOR') env[key] = value;
  env.NO_COLOR = '1';
  return env;
}

/** `node dist/cli/main.js <args>` with stdin closed and stdout/stderr captured. */
export function spawnCliProcess(args: string[], options: SpawnOptions = {}): CliProcess {
  const env = options.isolated ? cleanEnv() : { ...process.env };
  const child = spawn(process.execPath, [CLI, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...env, ...options.env },
    ...(options.isolated ? { cwd: REPO, detached: true } : {}),
  });
  const streams = { stdout: '', stderr: '', output: '' };
  for (const name of ['stdout', 'stderr'] as const) {
    child[name]!.setEncoding('utf8').on('data', (chunk: string) => {
      streams[name] += chunk;
      streams.output += chunk;
      if (streams.output.length > 200_000) streams.output = streams.output.slice(-100_000);
    });
  }
  let done = false;
  const exited = new Promise<ExitStatus>((resolve) =>
    child.once('exit', (code, signal) => {
      done = true;
      resolve({ code, signal });
    }),
  );
  const closed = new Promise<ExitStatus>((resolve) =>
    child.once('close', (code, signal) => resolve({ code, signal })),
  );
  return {
    child,
    pid: child.pid!,
    output: () => streams.output,
    stdout: () => streams.stdout,
    stderr: () => streams.stderr,
    exited,
    closed,
    running: () => !done,
  };
}

/** Remembers the processes it started until they exit. */
export class ProcessTracker {
  readonly #live = new Set<CliProcess>();

  spawn(args: string[], options: SpawnOptions = {}): CliProcess {
    const proc = spawnCliProcess(args, options);
    this.#live.add(proc);
    void proc.exited.then(() => this.#live.delete(proc));
    return proc;
  }

  /** Every process started here that still runs; forgotten from now on. */
  take(): CliProcess[] {
    const live = [...this.#live];
    this.#live.clear();
    return live;
  }
}

/**
 * Resolves once `ready()` holds, checked whenever output arrives; rejects if
 * the process exits first, or after `timeoutMs`.
 */
export function untilOutput(
  proc: CliProcess,
  ready: () => boolean,
  what: string,
  timeoutMs: number,
): Promise<void> {
  return new Promise((resolve, reject) => {
    const streams = [proc.child.stdout!, proc.child.stderr!];
    const settle = (error?: Error) => {
      clearTimeout(timer);
      for (const stream of streams) stream.off('data', check);
      if (error) reject(error);
      else resolve();
    };
    const check = () => {
      if (ready()) settle();
    };
    const timer = setTimeout(
      () => settle(new Error(`${what}: not within ${timeoutMs} ms:\n${proc.output()}`)),
      timeoutMs,
    );
    for (const stream of streams) stream.on('data', check);
    void proc.exited.then(({ code, signal }) =>
      settle(new Error(`${what}: the process exited (${code ?? signal}) first:\n${proc.output()}`)),
    );
    check();
  });
}

/** Resolves once the process logs `"event":"<readyEvent>"`; see untilOutput. */
export function untilLogged(
  proc: CliProcess,
  role: string,
  readyEvent: string,
  timeoutMs: number,
): Promise<void> {
  return untilOutput(
    proc,
    () => proc.output().includes(`"event":"${readyEvent}"`),
    `${role} to log ${readyEvent}`,
    timeoutMs,
  );
}

/** Sends `signal` to the process group the child leads, if it is still there. */
export function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // the group is gone
  }
}

/**
 * Waits for the end of a run: the exit, or with `closed` also the end of its
 * output. After `timeoutMs` its process group is SIGKILLed.
 */
export async function completion(
  proc: CliProcess,
  options: { timeoutMs?: number; closed?: boolean } = {},
): Promise<ExitStatus> {
  const timer =
    options.timeoutMs === undefined
      ? undefined
      : setTimeout(() => signalGroup(proc.child, 'SIGKILL'), options.timeoutMs);
  try {
    return await (options.closed ? proc.closed : proc.exited);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * SIGTERM (the process group it leads when `group`, else the process alone),
 * SIGKILL after `graceMs`, wait for the exit. A group is SIGKILLed again
 * afterwards for anything of it that outlived its leader.
 */
export async function terminate(proc: CliProcess, graceMs: number, group = false): Promise<void> {
  const send = (signal: NodeJS.Signals) => {
    if (group) signalGroup(proc.child, signal);
    else if (proc.running()) proc.child.kill(signal);
  };
  if (proc.running()) {
    send('SIGTERM');
    const timer = setTimeout(() => send('SIGKILL'), graceMs);
    await proc.exited;
    clearTimeout(timer);
  }
  if (group) signalGroup(proc.child, 'SIGKILL');
}

/** SIGKILL (kill -9) the process alone and wait until it is gone. */
export async function kill9(proc: CliProcess): Promise<void> {
  if (proc.running()) proc.child.kill('SIGKILL');
  await proc.exited;
}
