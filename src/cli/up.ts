// `switchyard up`: the embedded default on one machine. A private redis-server
// for the data dir (unix socket inside it, no TCP port, AOF on) when no URL is
// given, then the api, N workers and the scheduler as child processes. A dead
// worker is restarted with backoff; Ctrl-C / SIGTERM stops everything in order
// (api and scheduler, then workers drained, then Redis last) and leaves no
// process behind. One `up` per data dir, guarded by a lock file with the pid.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdir, open, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { InvalidInputError } from '../core/errors.js';
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
  let redisServer: ChildProcess | undefined;
  let stopping = false;
  try {
    if (config.embedded) {
      redisServer = await startEmbeddedRedis(config.dataDir, options.appendfsync, logger, signal);
    }
    const cli = process.argv[1]!;
    const globals = ['--data-dir', config.dataDir, '--redis-url', config.redisUrl, '--prefix', config.prefix];
    const launch = (role: string, args: string[]) => {
      const child = spawn(process.execPath, [cli, ...globals, ...args], {
        stdio: ['ignore', 'inherit', 'inherit'],
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

    const url = `http://${options.host.includes(':') ? `[${options.host}]` : options.host}:${options.port}`;
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
      if (redisServer) await stopEmbeddedRedis(redisServer);
      await releaseLock();
      resolveStopped();
      return stopped;
    };
    api.once('exit', () => !stopping && void stop());
    return { url, redisUrl: config.redisUrl, stop, stopped };
  } catch (error) {
    stopping = true;
    for (const child of children) await terminate(child);
    if (redisServer) await stopEmbeddedRedis(redisServer);
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
): Promise<ChildProcess> {
  const found = spawnSync('redis-server', ['--version'], { encoding: 'utf8' });
  if (found.error) {
    throw new InvalidInputError(
      'redis-server is not installed; install it (Debian/Ubuntu: `sudo apt-get install redis-server`, macOS: `brew install redis`), or pass --redis-url to use a Redis you run',
    );
  }
  const dir = join(dataDir, 'redis');
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const socket = embeddedSocket(dataDir);
  await rm(socket, { force: true });
  const server = spawn(
    'redis-server',
    [
      '--port',
      '0',
      '--unixsocket',
      socket,
      '--unixsocketperm',
      '700',
      '--dir',
      dir,
      '--appendonly',
      'yes',
      '--appendfsync',
      appendfsync,
      '--save',
      '',
      '--daemonize',
      'no',
      '--logfile',
      join(dir, 'redis.log'),
    ],
    { stdio: 'ignore' },
  );
  logger.info({ event: 'redis-starting', socket, appendfsync }, 'starting the embedded redis-server');
  const url = `redis+unix://${socket}`;
  const deadline = Date.now() + 15_000;
  for (;;) {
    if (server.exitCode !== null)
      throw new Error(`redis-server exited at start; see ${join(dir, 'redis.log')}`);
    if (signal?.aborted) {
      await terminate(server);
      throw new StartAborted();
    }
    const client = new Redis({
      path: socket,
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    });
    client.on('error', () => {});
    try {
      await client.connect();
      await client.ping();
      client.disconnect();
      logger.info({ event: 'redis-ready', url }, 'embedded redis-server ready');
      return server;
    } catch {
      client.disconnect();
      if (Date.now() > deadline) {
        server.kill('SIGKILL');
        throw new Error(
          `the embedded redis-server did not answer within 15 s; see ${join(dir, 'redis.log')}`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

async function stopEmbeddedRedis(server: ChildProcess): Promise<void> {
  // SIGTERM makes redis-server flush the AOF and exit cleanly.
  await terminate(server, 10_000);
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
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
