// Helpers for the HTTP API tests: a real `switchyard api` process (and, where
// work must execute, real `worker` / `scheduler` processes) spawned from
// dist/cli/main.js against an owned Redis, spoken to over real HTTP with the
// global fetch. Every process started here is remembered; stopAll() ends them
// (by their own process group, which they lead) in afterAll.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'vitest';
import { REPO } from '../support/data-dir.js';
import { freePort } from '../support/redis.js';

export const CLI = join(REPO, 'dist', 'cli', 'main.js');
export const PLUGIN_ID = 'fixture-inspector';
export const ALL_SCOPES = ['project.metadata.read', 'project.files.read', 'project.operate'];
export const TOKEN_FORMAT = /^sy_[a-z0-9]{12}_[A-Za-z0-9_-]{43}$/;

export function requireBuiltCli(): void {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing; run \`npm run build\` first`);
}

export interface Installation {
  dataDir: string;
  redisUrl: string;
  prefix: string;
}

export function globalArgs(installation: Installation): string[] {
  return [
    '--data-dir',
    installation.dataDir,
    '--redis-url',
    installation.redisUrl,
    '--prefix',
    installation.prefix,
  ];
}

export interface Proc {
  child: ChildProcess;
  output(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  running(): boolean;
}

const started = new Set<Proc>();

function cleanEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env))
    if (!key.startsWith('SWITCHYARD_') && key !== 'FORCE_COLOR') env[key] = value;
  env.NO_COLOR = '1';
  return env;
}

/** `node dist/cli/main.js <args>` in its own process group, output captured. */
export function spawnCli(args: string[]): Proc {
  const child = spawn(process.execPath, [CLI, ...args], {
    cwd: REPO,
    env: cleanEnv(),
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let output = '';
  const onData = (chunk: Buffer) => {
    output += chunk.toString();
    if (output.length > 200_000) output = output.slice(-100_000);
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  let done = false;
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => {
      done = true;
      resolve({ code, signal });
    }),
  );
  const proc: Proc = { child, output: () => output, exited, running: () => !done };
  started.add(proc);
  void exited.then(() => started.delete(proc));
  return proc;
}

/** Runs one CLI command to completion. */
export async function runCli(
  args: string[],
  timeoutMs = 30_000,
): Promise<{ code: number | null; output: string }> {
  const proc = spawnCli(args);
  const timer = setTimeout(() => signalGroup(proc, 'SIGKILL'), timeoutMs);
  const { code } = await proc.exited;
  clearTimeout(timer);
  return { code, output: proc.output() };
}

function signalGroup(proc: Proc, signal: NodeJS.Signals): void {
  const pid = proc.child.pid;
  if (pid === undefined) return;
  try {
    process.kill(-pid, signal);
  } catch {
    // the group is gone
  }
}

/** SIGTERM the process group it leads, SIGKILL after graceMs, wait for the exit. */
export async function stopProc(proc: Proc, graceMs = 5_000): Promise<void> {
  if (proc.running()) {
    signalGroup(proc, 'SIGTERM');
    const timer = setTimeout(() => signalGroup(proc, 'SIGKILL'), graceMs);
    await proc.exited;
    clearTimeout(timer);
  }
  signalGroup(proc, 'SIGKILL'); // a plugin call that outlived its worker
}

export async function stopAll(): Promise<void> {
  await Promise.all([...started].map((proc) => stopProc(proc)));
}

export interface Api {
  proc: Proc;
  base: string;
  port: number;
  /** The first admin token, read from <data-dir>/api-token. */
  adminToken: string;
}

/** `switchyard api --port <free>`; resolves once it answers HTTP and wrote api-token. */
export async function startApi(installation: Installation, extra: string[] = []): Promise<Api> {
  const port = await freePort();
  const proc = spawnCli([...globalArgs(installation), 'api', '--port', String(port), ...extra]);
  const base = `http://127.0.0.1:${port}`;
  await waitFor(
    'the api to answer /healthz',
    async () => {
      if (!proc.running()) throw new Error(`api exited early:\n${proc.output()}`);
      try {
        const response = await fetch(`${base}/healthz`);
        await response.arrayBuffer();
        return true;
      } catch {
        return false;
      }
    },
    20_000,
  );
  const adminToken = (await readFile(join(installation.dataDir, 'api-token'), 'utf8')).trim();
  return { proc, base, port, adminToken };
}

/** A process that logs `"event":"<readyEvent>"` on stdout when it is ready. */
async function startLogged(installation: Installation, args: string[], readyEvent: string): Promise<Proc> {
  const proc = spawnCli([...globalArgs(installation), ...args]);
  await waitFor(
    `${args[0]} to log ${readyEvent}`,
    async () => {
      if (!proc.running()) throw new Error(`${args[0]} exited early:\n${proc.output()}`);
      return proc.output().includes(`"event":"${readyEvent}"`);
    },
    20_000,
  );
  return proc;
}

export function startWorker(installation: Installation): Promise<Proc> {
  return startLogged(installation, ['worker', '--concurrency', '2'], 'worker-ready');
}

export function startScheduler(installation: Installation): Promise<Proc> {
  return startLogged(installation, ['scheduler'], 'scheduler-synced');
}

// ---- HTTP --------------------------------------------------------------------------------

export interface Answer<T = unknown> {
  status: number;
  headers: Headers;
  text: string;
  json: T;
}

export interface CallOptions {
  token?: string;
  body?: unknown;
  /** Sent as is (with content-type application/json), instead of JSON.stringify(body). */
  rawBody?: string;
  headers?: Record<string, string>;
}

/** One HTTP request; the body parsed as JSON when it is JSON. */
export async function call<T = unknown>(
  api: Pick<Api, 'base'>,
  method: string,
  path: string,
  options: CallOptions = {},
): Promise<Answer<T>> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
  let body: string | undefined;
  if (options.rawBody !== undefined) body = options.rawBody;
  else if (options.body !== undefined) body = JSON.stringify(options.body);
  if (body !== undefined) headers['content-type'] ??= 'application/json';
  const response = await fetch(`${api.base}${path}`, { method, headers, ...(body ? { body } : {}) });
  const text = await response.text();
  let json: unknown = undefined;
  try {
    json = JSON.parse(text);
  } catch {
    // not JSON
  }
  return { status: response.status, headers: response.headers, text, json: json as T };
}

export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  errors?: { field: string; message: string }[];
}

/** Asserts an RFC 9457 problem document with the given status; returns it. */
export function expectProblem(answer: Answer, status: number): Problem {
  const context = `${answer.status} ${answer.text}`;
  expect(answer.status, context).toBe(status);
  expect(answer.headers.get('content-type') ?? '', context).toMatch(/^application\/problem\+json/);
  const problem = answer.json as Problem;
  expect(problem, context).toMatchObject({ type: 'about:blank', status, title: expect.any(String) });
  expect(typeof problem.detail, context).toBe('string');
  expect(problem.detail.length, context).toBeGreaterThan(0);
  return problem;
}

export interface SseEvent {
  event: string;
  data: unknown;
}

/**
 * Reads a Server-Sent Events response with fetch() and a streaming body
 * reader until the server ends it, `until` says stop, or timeoutMs passes.
 */
export async function readEvents(
  api: Pick<Api, 'base'>,
  path: string,
  token: string,
  timeoutMs = 30_000,
  until: (event: SseEvent) => boolean = () => false,
): Promise<{ status: number; contentType: string; events: SseEvent[]; ended: boolean }> {
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), timeoutMs);
  const events: SseEvent[] = [];
  let ended = false;
  try {
    const response = await fetch(`${api.base}${path}`, {
      headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' },
      signal: abort.signal,
    });
    const contentType = response.headers.get('content-type') ?? '';
    if (!response.body || !contentType.startsWith('text/event-stream')) {
      await response.text().catch(() => '');
      return { status: response.status, contentType, events, ended: true };
    }
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) {
          ended = true;
          break;
        }
        buffer += decoder.decode(value, { stream: true });
        let boundary: number;
        let stop = false;
        while ((boundary = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, boundary);
          buffer = buffer.slice(boundary + 2);
          const event = parseBlock(block);
          if (event) {
            events.push(event);
            if (until(event)) stop = true;
          }
        }
        if (stop) {
          await reader.cancel().catch(() => {});
          break;
        }
      }
    } catch (error) {
      if (!abort.signal.aborted) throw error;
    }
    return { status: response.status, contentType, events, ended };
  } finally {
    clearTimeout(timer);
  }
}

function parseBlock(block: string): SseEvent | undefined {
  let event = 'message';
  const data: string[] = [];
  for (const line of block.split('\n')) {
    if (line.startsWith(':')) continue;
    if (line.startsWith('event:')) event = line.slice(6).trim();
    else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
  }
  if (data.length === 0) return undefined;
  const text = data.join('\n');
  try {
    return { event, data: JSON.parse(text) };
  } catch {
    return { event, data: text };
  }
}

// ---- small helpers ------------------------------------------------------------------------

export async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined | null | false>,
  timeoutMs = 20_000,
  intervalMs = 100,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/** A token in the right format for `id` whose secret is not the stored one. */
export function wrongSecretToken(realToken: string): string {
  const id = realToken.split('_')[1]!;
  const secret = realToken.slice(`sy_${id}_`.length);
  let wrong = 'A'.repeat(43);
  if (wrong === secret) wrong = 'B'.repeat(43);
  return `sy_${id}_${wrong}`;
}
