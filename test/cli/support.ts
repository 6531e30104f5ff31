// Helpers for the end-to-end tests of the `switchyard` CLI: the built CLI run
// as a real subprocess, real worker processes, and checks of what a user sees
// (exit status, stdout, stderr). Every process started here is recorded and
// killed by `stopAll()`, so a failing test cannot leak one into the next.
import { execFileSync, type ChildProcess } from 'node:child_process';
import { expect } from 'vitest';
import {
  CLI,
  ProcessTracker,
  completion,
  globalArgs,
  requireBuiltCli,
  signalGroup,
  terminate,
  untilOutput,
  type CliProcess,
  type Target,
} from '../support/cli-process.js';
import { waitFor as waitUntil } from '../support/wait.js';

export { CLI, globalArgs, requireBuiltCli, signalGroup as killGroup };

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/** An installation the CLI talks to: a data dir, a Redis and a key prefix. */
export type Installation = Target;

/** A running CLI process, with what it wrote so far. */
export type CliChild = ChildProcess & {
  output: { readonly stdout: string; readonly stderr: string };
  proc: CliProcess;
};

const started = new ProcessTracker();

/**
 * Starts `node dist/cli/main.js <args>` in its own process group (so the
 * whole tree can be killed) with stdin closed and stdout/stderr captured;
 * `env` is added to its environment.
 */
export function spawnCli(args: string[], env?: Record<string, string>): CliChild {
  const proc = started.spawn(args, { isolated: true, ...(env ? { env } : {}) });
  const output = {
    get stdout() {
      return proc.stdout();
    },
    get stderr() {
      return proc.stderr();
    },
  };
  return Object.assign(proc.child, { output, proc });
}

/** Runs the CLI to completion (killed after `timeoutMs`). */
export async function runCli(args: string[], timeoutMs = 30_000): Promise<CliResult> {
  const begin = performance.now();
  const { proc } = spawnCli(args);
  // closed: the exit, and all of stdout and stderr read.
  const { code, signal } = await completion(proc, { timeoutMs, closed: true });
  return { code, signal, stdout: proc.stdout(), stderr: proc.stderr(), ms: performance.now() - begin };
}

/** `runCli` with the installation's global options in front. */
export function cliOn(installation: Installation) {
  return (args: string[], timeoutMs?: number) => runCli([...globalArgs(installation), ...args], timeoutMs);
}

/**
 * Resolves with [code, signal] once the process has exited (at once if it
 * already has). Not `close`: children that inherited its stdout and stderr
 * can hold them open after it exited.
 */
export function exitOf(child: ChildProcess): Promise<[number | null, NodeJS.Signals | null]> {
  if (child.exitCode !== null || child.signalCode !== null)
    return Promise.resolve([child.exitCode, child.signalCode]);
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve([code, signal])));
}

/** Like `exitOf`, but rejects after `ms`. */
export async function exitWithin(
  child: ChildProcess,
  ms: number,
): Promise<[number | null, NodeJS.Signals | null]> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`pid ${child.pid} did not exit within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([exitOf(child), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** SIGTERM the process group, SIGKILL it after `graceMs`, wait for the exit. */
export function stopProcess(child: CliChild, graceMs = 10_000): Promise<void> {
  return terminate(child.proc, graceMs, true);
}

/** Stops every process these helpers started and that is still running. */
export async function stopAll(): Promise<void> {
  await Promise.all(started.take().map((proc) => terminate(proc, 5_000, true)));
}

/**
 * A `switchyard worker` for the installation. Waits (briefly) for its
 * `worker-ready` log line; the log wording is not part of the contract and
 * queued work waits for the worker anyway, so its absence is not an error.
 */
export async function startWorker(installation: Installation, concurrency = 2): Promise<CliChild> {
  const worker = spawnCli([...globalArgs(installation), 'worker', '--concurrency', String(concurrency)]);
  await untilOutput(
    worker.proc,
    () => worker.output.stdout.includes('worker-ready'),
    'the worker to start',
    10_000,
  ).catch(() => undefined);
  if (worker.exitCode !== null)
    throw new Error(`worker exited at start (${worker.exitCode}): ${worker.output.stderr}`);
  return worker;
}

export async function waitFor(
  check: () => Promise<boolean> | boolean,
  timeoutMs: number,
  what: string,
  giveUp: () => boolean = () => false,
): Promise<void> {
  await waitUntil(
    what,
    async () => {
      if (await check()) return true;
      if (giveUp()) throw new Error(`gave up waiting for ${what}`);
      return false;
    },
    timeoutMs,
    100,
  );
}

/** Parses stdout as exactly one JSON document; fails on anything else around it. */
export function onlyJson<T = unknown>(result: CliResult): T {
  const text = result.stdout.trim();
  expect(text, `stdout should hold one JSON document; stderr: ${result.stderr}`).toMatch(
    /^[[{][\s\S]*[\]}]$/,
  );
  try {
    return JSON.parse(text) as T;
  } catch (error) {
    throw new Error(`stdout is not exactly one JSON document (${(error as Error).message}):\n${text}`);
  }
}

/**
 * A bad-input failure as docs/CLI.md describes it: exit 2, nothing on stdout,
 * one `error:` line that says what to fix, at most two non-empty lines in
 * all, and no stack trace.
 */
export function expectUsageError(result: CliResult, message: RegExp): string {
  const context = `exit ${result.code}\nstdout: ${result.stdout}\nstderr: ${result.stderr}`;
  expect(result.code, context).toBe(2);
  // CLI.md: with --json an error is one JSON document on stdout; without, stdout stays empty.
  if (result.stdout !== '')
    expect(JSON.parse(result.stdout), context).toEqual({
      error: { code: expect.any(String), message: expect.stringMatching(message) },
    });
  const lines = result.stderr.split('\n').filter((line) => line.trim() !== '');
  expect(
    lines.filter((line) => /^\s{4}at /.test(line)),
    `no stack trace expected:\n${result.stderr}`,
  ).toEqual([]);
  const errors = lines.filter((line) => line.startsWith('error: '));
  expect(errors, `exactly one error line expected:\n${result.stderr}`).toHaveLength(1);
  expect(lines.length, `at most two lines expected on stderr:\n${result.stderr}`).toBeLessThanOrEqual(2);
  expect(errors[0]).toMatch(message);
  return errors[0]!;
}

/** `ps -eo pid,args` lines that mention `needle` (not the ps itself). */
export function processesMentioning(needle: string): string[] {
  const out = execFileSync('ps', ['-eo', 'pid,args'], { encoding: 'utf8' });
  return out
    .split('\n')
    .filter((line) => line.includes(needle))
    .map((line) => line.trim())
    .filter((line) => !/^\d+\s+ps -eo/.test(line));
}

/** SIGKILL every process whose command line mentions `needle`. */
export function killMentioning(needle: string): void {
  for (const line of processesMentioning(needle)) {
    const pid = Number(line.split(/\s+/)[0]);
    if (pid > 0 && pid !== process.pid) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone
      }
    }
  }
}

/** The full 64-hex fingerprint from `plugin show --json`. */
export async function fingerprintOf(installation: Installation, pluginId: string): Promise<string> {
  const shown = onlyJson<{ fingerprint: string }>(
    await runCli([...globalArgs(installation), '--json', 'plugin', 'show', pluginId]),
  );
  expect(shown.fingerprint).toMatch(/^[0-9a-f]{64}$/);
  return shown.fingerprint;
}

/** [refresh →] show → trust → enable with `scopes` (none: trust only), asserting each step succeeded. */
export async function reviewAndEnable(
  installation: Installation,
  pluginId: string,
  scopes: string[],
  options: { refresh?: boolean } = {},
): Promise<string> {
  const cli = cliOn(installation);
  if (options.refresh !== false) expect((await cli(['--json', 'plugin', 'refresh'])).code).toBe(0);
  const fingerprint = await fingerprintOf(installation, pluginId);
  const trusted = await cli(['--json', 'plugin', 'trust', pluginId, '--fingerprint', fingerprint, '--yes']);
  expect(trusted.code, trusted.stderr).toBe(0);
  if (scopes.length > 0) {
    const enabled = await cli([
      '--json',
      'plugin',
      'enable',
      pluginId,
      ...scopes.flatMap((scope) => ['--scope', scope]),
      '--yes',
    ]);
    expect(enabled.code, enabled.stderr).toBe(0);
  }
  return fingerprint;
}
