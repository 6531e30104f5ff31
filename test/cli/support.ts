// Helpers for the end-to-end tests of the `switchyard` CLI: the built CLI run
// as a real subprocess, real worker processes, and checks of what a user sees
// (exit status, stdout, stderr). Every process started here is recorded and
// killed by `stopAll()`, so a failing test cannot leak one into the next.
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { REPO } from '../support/data-dir.js';

export const CLI = join(REPO, 'dist', 'cli', 'main.js');

/** Fails early, with the fix, when the CLI has not been built. */
export function requireBuiltCli(): void {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing; run \`npm run build\` first`);
}

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/** An installation the CLI talks to: a data dir, a Redis and a key prefix. */
export interface Installation {
  dataDir: string;
  redisUrl?: string;
  prefix?: string;
}

export function globalArgs(installation: Installation): string[] {
  return [
    '--data-dir',
    installation.dataDir,
    ...(installation.redisUrl ? ['--redis-url', installation.redisUrl] : []),
    ...(installation.prefix ? ['--prefix', installation.prefix] : []),
  ];
}

const started = new Set<ChildProcess>();

/** Environment without SWITCHYARD_* from the caller, so only the flags decide. */
function cleanEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env))
    if (!key.startsWith('SWITCHYARD_') && key !== 'FORCE_COLOR') env[key] = value;
  env.NO_COLOR = '1';
  return env;
}

/**
 * Starts `node dist/cli/main.js <args>` in its own process group (so the
 * whole tree can be killed) with stdin closed and stdout/stderr captured.
 */
export function spawnCli(args: string[]): ChildProcess & { output: { stdout: string; stderr: string } } {
  const child = spawn(process.execPath, [CLI, ...args], {
    cwd: REPO,
    env: cleanEnv(),
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  const output = { stdout: '', stderr: '' };
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (output.stdout += chunk));
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (output.stderr += chunk));
  started.add(child);
  child.once('exit', () => started.delete(child));
  return Object.assign(child, { output });
}

/** Runs the CLI to completion (killed after `timeoutMs`). */
export async function runCli(args: string[], timeoutMs = 30_000): Promise<CliResult> {
  const begin = performance.now();
  const child = spawnCli(args);
  const timer = setTimeout(() => killGroup(child, 'SIGKILL'), timeoutMs);
  // `close`: the exit, and all of stdout and stderr read.
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
    child.once('close', (exitCode, exitSignal) => resolve([exitCode, exitSignal])),
  );
  clearTimeout(timer);
  return {
    code,
    signal,
    stdout: child.output.stdout,
    stderr: child.output.stderr,
    ms: performance.now() - begin,
  };
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

export function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // the group is gone
  }
}

/** SIGTERM the process group, SIGKILL it after `graceMs`, wait for the exit. */
export async function stopProcess(child: ChildProcess, graceMs = 10_000): Promise<void> {
  killGroup(child, 'SIGTERM');
  const timer = setTimeout(() => killGroup(child, 'SIGKILL'), graceMs);
  await exitOf(child);
  clearTimeout(timer);
  killGroup(child, 'SIGKILL'); // anything of the group that outlived its leader
}

/** Stops every process these helpers started and that is still running. */
export async function stopAll(): Promise<void> {
  await Promise.all([...started].map((child) => stopProcess(child, 5_000)));
}

/**
 * A `switchyard worker` for the installation. Waits (briefly) for its
 * `worker-ready` log line; the log wording is not part of the contract and
 * queued work waits for the worker anyway, so its absence is not an error.
 */
export async function startWorker(installation: Installation, concurrency = 2): Promise<ChildProcess> {
  const worker = spawnCli([...globalArgs(installation), 'worker', '--concurrency', String(concurrency)]);
  await waitFor(
    () => worker.output.stdout.includes('worker-ready'),
    10_000,
    'the worker to start',
    () => worker.exitCode !== null,
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
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (giveUp()) throw new Error(`gave up waiting for ${what}`);
    if (performance.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
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
 * A bad-input failure as CLI.md describes it: exit 2, nothing on stdout,
 * one `error:` line that says what to fix, at most two non-empty lines in
 * all, and no stack trace.
 */
export function expectUsageError(result: CliResult, message: RegExp): string {
  const context = `exit ${result.code}\nstdout: ${result.stdout}\nstderr: ${result.stderr}`;
  expect(result.code, context).toBe(2);
  expect(result.stdout, context).toBe('');
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
