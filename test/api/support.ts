// Helpers for the HTTP API tests: a real `switchyard api` process (and, where
// work must execute, real `worker` / `scheduler` processes) spawned from
// dist/cli/main.js against an owned Redis, spoken to over real HTTP with the
// global fetch. Every process started here is remembered; stopAll() ends them
// (by their own process group, which they lead) in afterAll.
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { serverEvents, textChunks } from '../../src/core/contract/index.js';
import {
  CLI,
  ProcessTracker,
  completion,
  globalArgs,
  requireBuiltCli,
  terminate,
  untilLogged,
  type CliProcess,
} from '../support/cli-process.js';
import { FIXTURE_INSPECTOR_DIST, installPackage, uniquePrefix } from '../support/data-dir.js';
import { freePort, startOwnedRedis, type OwnedRedis, type OwnedRedisOptions } from '../support/redis.js';
import { waitFor } from '../support/wait.js';

export { CLI, globalArgs, requireBuiltCli };
export const PLUGIN_ID = 'fixture-inspector';
export const ALL_SCOPES = ['project.metadata.read', 'project.files.read', 'project.operate'];
export const TOKEN_FORMAT = /^sy_[a-z0-9]{12}_[A-Za-z0-9_-]{43}$/;

export interface Installation {
  dataDir: string;
  redisUrl: string;
  prefix: string;
}

export type Proc = CliProcess;

const started = new ProcessTracker();

/** `node dist/cli/main.js <args>` in its own process group, output captured; `env` added to its environment. */
export function spawnCli(args: string[], env?: Record<string, string>): Proc {
  return started.spawn(args, { isolated: true, ...(env ? { env } : {}) });
}

/** Runs one CLI command to completion. */
export async function runCli(
  args: string[],
  timeoutMs = 30_000,
  env?: Record<string, string>,
): Promise<{ code: number | null; output: string }> {
  const proc = spawnCli(args, env);
  const { code } = await completion(proc, { timeoutMs });
  return { code, output: proc.output() };
}

/** SIGTERM the process group it leads, SIGKILL after graceMs, wait for the exit. */
export function stopProc(proc: Proc, graceMs = 5_000): Promise<void> {
  return terminate(proc, graceMs, true);
}

export async function stopAll(): Promise<void> {
  await Promise.all(started.take().map((proc) => stopProc(proc)));
}

export interface Api {
  proc: Proc;
  base: string;
  port: number;
  /** The first admin token, read from <data-dir>/api-token. */
  adminToken: string;
}

/** `switchyard api --port <free>`; resolves once it answers HTTP and wrote api-token. */
export async function startApi(
  installation: Installation,
  extra: string[] = [],
  env?: Record<string, string>,
): Promise<Api> {
  const port = await freePort();
  const proc = spawnCli([...globalArgs(installation), 'api', '--port', String(port), ...extra], env);
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

export interface ApiSetup {
  redis: OwnedRedis;
  /** A temp dir: the data dir is <root>/data; removed by close(). */
  root: string;
  installation: Installation;
  api: Api;
  /** Stops every process these helpers started, the Redis, and removes root. */
  close(): Promise<void>;
}

/**
 * The set-up the API test files share: an owned Redis, a temp root whose
 * data dir holds the fixture-inspector package, whatever `prepare` adds, and
 * a running api. What was made is undone when a step fails.
 */
export async function setUpApi(
  name: string,
  prepare: (root: string, dataDir: string) => Promise<void> = async () => {},
  redisOptions: OwnedRedisOptions = {},
): Promise<ApiSetup> {
  requireBuiltCli();
  const redis = await startOwnedRedis(redisOptions);
  let root: string | undefined;
  const close = async () => {
    await stopAll();
    await redis.stop();
    if (root) await rm(root, { recursive: true, force: true });
  };
  try {
    root = await mkdtemp(join(tmpdir(), `switchyard-${name}-`));
    const dataDir = join(root, 'data');
    await mkdir(join(dataDir, 'plugins'), { recursive: true });
    await installPackage(dataDir, FIXTURE_INSPECTOR_DIST, PLUGIN_ID);
    await prepare(root, dataDir);
    const installation = { dataDir, redisUrl: redis.url, prefix: uniquePrefix(name) };
    const api = await startApi(installation);
    return { redis, root, installation, api, close };
  } catch (error) {
    await close();
    throw error;
  }
}

/** A process that logs `"event":"<readyEvent>"` on stdout when it is ready. */
async function startLogged(installation: Installation, args: string[], readyEvent: string): Promise<Proc> {
  const proc = spawnCli([...globalArgs(installation), ...args]);
  await untilLogged(proc, args[0]!, readyEvent, 20_000);
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
    // The contract's reader, as the CLI and the web UI read streams.
    try {
      ended = true;
      for await (const { event, data } of serverEvents(textChunks(response.body))) {
        const parsed = { event, data: jsonOrText(data) };
        events.push(parsed);
        if (until(parsed)) {
          ended = false;
          break;
        }
      }
    } catch (error) {
      ended = false;
      if (!abort.signal.aborted) throw error;
    }
    return { status: response.status, contentType, events, ended };
  } finally {
    clearTimeout(timer);
  }
}

function jsonOrText(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

// ---- small helpers ------------------------------------------------------------------------

export { waitFor } from '../support/wait.js';

/** A token in the right format for `id` whose secret is not the stored one. */
export function wrongSecretToken(realToken: string): string {
  const id = realToken.split('_')[1]!;
  const secret = realToken.slice(`sy_${id}_`.length);
  let wrong = 'A'.repeat(43);
  if (wrong === secret) wrong = 'B'.repeat(43);
  return `sy_${id}_${wrong}`;
}

/**
 * The admin's review journey over HTTP: refresh, trust the fixture at its
 * current fingerprint, enable it with `scopes`, and scan <root>/projects
 * trusting what it finds; each step must succeed.
 */
export async function trustEnableAndScan(setup: ApiSetup, scopes: string[] = ALL_SCOPES): Promise<void> {
  const { api } = setup;
  const token = api.adminToken;
  const refreshed = await call(api, 'POST', '/api/v1/plugins/refresh', { token, body: {} });
  if (refreshed.status !== 200) throw new Error(`refresh: ${refreshed.text}`);
  const shown = await call<{ fingerprint: string }>(api, 'GET', `/api/v1/plugins/${PLUGIN_ID}`, { token });
  const trusted = await call(api, 'POST', `/api/v1/plugins/${PLUGIN_ID}/trust`, {
    token,
    body: { fingerprint: shown.json.fingerprint },
  });
  if (trusted.status !== 200) throw new Error(`trust: ${trusted.text}`);
  const enabled = await call(api, 'POST', `/api/v1/plugins/${PLUGIN_ID}/enable`, { token, body: { scopes } });
  if (enabled.status !== 200) throw new Error(`enable: ${enabled.text}`);
  const added = await call(api, 'POST', '/api/v1/projects/scan', {
    token,
    body: { dir: join(setup.root, 'projects'), trust: true },
  });
  if (added.status !== 201) throw new Error(`project scan: ${added.text}`);
}

/** An operation of the fixture on project `shop`; with no worker running it stays queued. */
export async function queueEchoOperation(api: Api, token: string): Promise<string> {
  const created = await call<{ id: string }>(api, 'POST', '/api/v1/operations', {
    token,
    body: { pluginId: PLUGIN_ID, projectId: 'shop', action: 'fixture.echo' },
  });
  expect(created.status, created.text).toBe(202);
  return created.json.id;
}

/** A batch of the fixture over project `shop`; with no worker running it stays running. */
export async function startShopBatch(api: Api, token: string): Promise<string> {
  const created = await call<{ batchId: string }>(api, 'POST', '/api/v1/batches', {
    token,
    body: { pluginId: PLUGIN_ID, projects: ['shop'] },
  });
  expect(created.status, created.text).toBe(202);
  return created.json.batchId;
}
