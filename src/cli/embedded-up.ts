// `switchyard up`: the embedded default on one machine. A private redis-server
// for the data dir (unix socket inside it, no TCP port, AOF on) when no URL is
// given, then the api, N workers and the scheduler as child processes. A dead
// worker is restarted with backoff; Ctrl-C / SIGTERM stops everything in order
// (api and scheduler, then workers drained, then Redis last) and leaves no
// process behind. One `up` per data dir, guarded by a lock file with the pid.
//
// `up` owns its children, also when it is SIGKILLed: the api, workers and
// scheduler hold an IPC channel to it and stop when it closes (see
// core/platform/run-until-signalled.ts); the redis-server gets a parent-death signal and
// holds a lock on its dir for its whole life (see core/redis/redis-server.ts, which
// also documents the fallback without util-linux). A redis-server of the data
// dir that is still running when `up` starts is shut down first, never doubled.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, open, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { InvalidInputError, sleep } from '../core/platform/index.js';
import {
  RedisDirBusyError,
  startRedisServer,
  stopStaleRedisServer,
  type RedisServer,
} from '../core/redis/index.js';
import type { ReadyMessage } from '../core/platform/index.js';
import type { Logger } from 'pino';
import { embeddedSocket, type ResolvedConfig } from './config.js';

export type AppendFsync = 'always' | 'everysec';

/** Start-up was interrupted (Ctrl-C / SIGTERM); everything started was stopped. */
export class StartAborted extends Error {
  constructor() {
    super('stopped during start-up');
  }
}

export interface UpOptions {
  workers: number;
  host: string;
  port: number;
  logLevel: string;
  appendfsync: AppendFsync;
  workerConcurrency: number;
  /** Passed to the api: plain HTTP on a non-loopback host (behind a TLS proxy). */
  insecureHttp?: boolean;
  /** Passed to the api: names /healthz and /metrics answer for. */
  allowedHosts?: string[];
}

export interface RunningUp {
  url: string;
  redisUrl: string;
  stop(): Promise<void>;
  stopped: Promise<void>;
}

const LOCK_NAME = 'switchyard-up.lock';

export async function startUp(
  config: ResolvedConfig,
  options: UpOptions,
  logger: Logger,
  /** Aborting during start-up (Ctrl-C) stops what was started and rejects. */
  signal?: AbortSignal,
): Promise<RunningUp> {
  await mkdir(config.dataDir, { recursive: true, mode: 0o755 });
  await mkdir(join(config.dataDir, 'plugins'), { recursive: true, mode: 0o755 });
  const releaseLock = await takeLock(config.dataDir);
  const children = new Set<ChildProcess>();
  let redisServer: RedisServer | undefined;
  let stopping = false;
  try {
    // Before Redis: a port held by anything (another Switchyard included) fails fast, by name.
    await ensurePortFree(options.host, options.port);
    if (config.embedded) {
      redisServer = await startEmbeddedRedis(config.dataDir, options.appendfsync, logger, signal);
    }
    const cli = process.argv[1]!;
    const globals = ['--data-dir', config.dataDir, '--prefix', config.prefix];
    // The Redis URL may hold a password: never on a command line (any local user reads those
    // with ps), only in the child's own environment, which only this user and root can read.
    const env = { ...process.env, SWITCHYARD_REDIS_URL: config.redisUrl };
    const launch = (role: string, args: string[]) => {
      // The IPC channel: the child stops when it closes (this process gone, even by SIGKILL).
      const child = spawn(process.execPath, [cli, ...globals, ...args], {
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
        env,
      });
      children.add(child);
      child.once('exit', () => children.delete(child));
      return child;
    };

    const api = launch('api', [
      'api',
      '--host',
      options.host,
      '--port',
      String(options.port),
      '--log-level',
      options.logLevel,
      ...(options.insecureHttp ? ['--insecure-http'] : []),
      ...(options.allowedHosts ?? []).flatMap((name) => ['--allowed-host', name]),
    ]);
    const scheduler = launch('scheduler', ['scheduler', '--log-level', options.logLevel]);
    const workers: ChildProcess[] = [];
    const superviseWorker = (index: number, failures = 0) => {
      const child = launch('worker', [
        'worker',
        '--concurrency',
        String(options.workerConcurrency),
        '--log-level',
        options.logLevel,
      ]);
      workers[index] = child;
      const startedAt = Date.now();
      child.once('exit', (code, signal) => {
        if (stopping) return;
        const quick = Date.now() - startedAt < 10_000;
        const next = quick ? failures + 1 : 0;
        const delay = Math.min(30_000, 500 * 2 ** Math.min(next, 6));
        logger.warn(
          { event: 'worker-exited', index, code, signal, restartInMs: delay },
          'worker exited; restarting',
        );
        setTimeout(() => !stopping && superviseWorker(index, next), delay).unref();
      });
    };
    for (let index = 0; index < options.workers; index += 1) superviseWorker(index);

    // Our own api's word that it listens, never whoever answers on the port.
    const ready = await waitReady(api, 30_000, signal);
    const port = typeof ready.port === 'number' ? ready.port : options.port;
    const url = `http://${options.host.includes(':') ? `[${options.host}]` : options.host}:${port}`;
    await waitHealthy(`${url}/healthz`, api, 30_000, signal);

    let resolveStopped!: () => void;
    const stopped = new Promise<void>((resolve) => (resolveStopped = resolve));
    const stop = async () => {
      if (stopping) return stopped;
      stopping = true;
      logger.info({ event: 'stopping' }, 'stopping: api and scheduler, then workers, then Redis');
      await Promise.all([terminate(api), terminate(scheduler)]);
      await Promise.all(workers.map((worker) => terminate(worker, 30_000)));
      for (const child of children) await terminate(child);
      // SIGTERM makes redis-server flush the AOF and exit cleanly.
      if (redisServer) await redisServer.stop(10_000);
      await releaseLock();
      resolveStopped();
      return stopped;
    };
    api.once('exit', () => !stopping && void stop());
    return { url, redisUrl: config.redisUrl, stop, stopped };
  } catch (error) {
    stopping = true;
    for (const child of children) await terminate(child);
    if (redisServer) await redisServer.stop(10_000);
    await releaseLock();
    throw error;
  }
}

/** Exclusive lock file holding our pid; a lock whose pid is gone is stale and taken over. */
async function takeLock(dataDir: string): Promise<() => Promise<void>> {
  const path = join(dataDir, LOCK_NAME);
  for (let attempt = 0; attempt < 2; attempt += 1) {
    try {
      const handle = await open(path, 'wx');
      await handle.writeFile(`${process.pid}\n`);
      await handle.close();
      return async () => {
        const owner = await readFile(path, 'utf8').catch(() => '');
        if (owner.trim() === String(process.pid)) await rm(path, { force: true });
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const pid = Number((await readFile(path, 'utf8').catch(() => '')).trim());
      if (Number.isInteger(pid) && pid > 0 && isAlive(pid)) {
        throw new InvalidInputError(
          `another \`switchyard up\` (pid ${pid}) is already running for ${dataDir}; stop it first, or use another --data-dir`,
        );
      }
      await rm(path, { force: true }); // stale: its process is gone
    }
  }
  throw new InvalidInputError(
    `could not take the lock ${path}; remove it if no \`switchyard up\` is running`,
  );
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function startEmbeddedRedis(
  dataDir: string,
  appendfsync: AppendFsync,
  logger: Logger,
  signal?: AbortSignal,
): Promise<RedisServer> {
  const dir = join(dataDir, 'redis');
  const socket = embeddedSocket(dataDir);
  const deadline = Date.now() + 15_000;
  for (;;) {
    // The previous `up` is gone (we hold its lock); its Redis may not be yet.
    const stale = await stopStaleRedisServer(dir, socket);
    if (stale)
      logger.warn(
        { event: 'redis-stale-stopped', redisPid: stale },
        `stopped the redis-server (pid ${stale}) a previous up of this data dir left running`,
      );
    logger.info({ event: 'redis-starting', socket, appendfsync }, 'starting the embedded redis-server');
    try {
      const server = await startRedisServer({
        dir,
        unixSocket: socket,
        appendfsync,
        readyTimeoutMs: 15_000,
        ...(signal ? { signal } : {}),
      });
      logger.info(
        { event: 'redis-ready', url: server.url, redisPid: server.pid, containment: server.containment },
        'embedded redis-server ready',
      );
      if (server.containment === 'none')
        logger.warn(
          { event: 'redis-uncontained' },
          'setpriv (util-linux) not found: if this up is killed with SIGKILL, its redis-server runs on until the next up on this data dir stops it',
        );
      return server;
    } catch (error) {
      if (signal?.aborted) throw new StartAborted();
      // Its lock is still held: an old server is finishing its exit.
      if (!(error instanceof RedisDirBusyError) || Date.now() > deadline) throw error;
      await sleep(200);
    }
  }
}

/** Fails when anything listens on host:port (bind and release; the api binds it for real). */
async function ensurePortFree(host: string, port: number): Promise<void> {
  if (port === 0) return;
  const error = await new Promise<NodeJS.ErrnoException | undefined>((resolve) => {
    const probe = createServer();
    probe.once('error', resolve);
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve(undefined)));
  });
  if (!error) return;
  if (error.code !== 'EADDRINUSE') throw error;
  const where = `${host.includes(':') ? `[${host}]` : host}:${port}`;
  const other = await answersHealthz(`http://${where}/healthz`);
  throw new InvalidInputError(
    `${host}:${port} is already in use${other ? ' (something there answers /healthz: another Switchyard installation?)' : ''}; choose another --port, or stop what holds it`,
  );
}

async function answersHealthz(url: string): Promise<boolean> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(1_000) });
    await response.arrayBuffer();
    return true;
  } catch {
    return false;
  }
}

/** Resolves with the api's ready message; rejects when it exits first. */
function waitReady(api: ChildProcess, timeoutMs: number, signal?: AbortSignal): Promise<ReadyMessage> {
  return new Promise((resolve, reject) => {
    const done = (settle: () => void) => {
      clearTimeout(timer);
      api.off('message', onMessage);
      api.off('exit', onExit);
      signal?.removeEventListener('abort', onAbort);
      settle();
    };
    const onMessage = (message: unknown) => {
      if ((message as ReadyMessage | undefined)?.type === 'switchyard-ready')
        done(() => resolve(message as ReadyMessage));
    };
    const onExit = () =>
      done(() =>
        reject(new Error('the api process exited during start-up (see its log above; is the port free?)')),
      );
    const onAbort = () => done(() => reject(new StartAborted()));
    const timer = setTimeout(
      () => done(() => reject(new Error(`the api did not start within ${timeoutMs / 1000} s`))),
      timeoutMs,
    );
    api.on('message', onMessage);
    api.once('exit', onExit);
    if (signal?.aborted) onAbort();
    else signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** SIGTERM, wait, then SIGKILL. */
async function terminate(child: ChildProcess, graceMs = 10_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

async function waitHealthy(
  url: string,
  api: ChildProcess,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (signal?.aborted) throw new StartAborted();
    if (api.exitCode !== null)
      throw new Error('the api process exited during start-up (see its log above; is the port free?)');
    try {
      // Bounded: something else holding the port may accept and never answer.
      const response = await fetch(url, { signal: AbortSignal.timeout(1_000) });
      if (response.status === 200) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`${url} did not answer 200 within ${timeoutMs / 1000} s`);
    await sleep(200);
  }
}
