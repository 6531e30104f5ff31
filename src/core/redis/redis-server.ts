// The one redis-server launcher, used by `switchyard up` (the embedded Redis of
// a data dir), the test support and the benchmarks. AOF on (everysec unless
// asked: docs/adr/0003-aof-everysec.md), no RDB snapshots, never daemonized.
//
// Containment (Linux, util-linux present, as on stock Debian/Ubuntu):
//   setpriv --pdeathsig TERM  the kernel sends redis-server SIGTERM when the
//                             thread that started it dies, even by SIGKILL;
//                             SIGTERM (not KILL) lets Redis fsync its AOF.
//   flock --no-fork -n        <dir>/redis.lock is held for the life of the
//                             redis-server process itself, so a second server
//                             on the same dir cannot start (kernel-enforced).
// Fallback where either tool is missing (macOS, minimal images): the server is
// started directly and writes <dir>/redis.pid; an owner that finds the dir's
// server still answering (see stopStaleRedisServer) shuts it down before it
// starts its own, so a dir never gets two servers, but a server can outlive a
// SIGKILLed owner until the next start on that dir.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { InvalidInputError, sleep } from '../platform/index.js';

export type AppendFsync = 'always' | 'everysec' | 'no';

export interface RedisServerOptions {
  /** Working directory: AOF, log, pidfile and lock live here. */
  dir: string;
  /** TCP port on `bind`; 0 or absent: no TCP listener (give `unixSocket`). */
  port?: number;
  bind?: string;
  unixSocket?: string;
  appendfsync?: AppendFsync;
  readyTimeoutMs?: number;
  /** Aborting while waiting for the server stops it and rejects with the signal's reason. */
  signal?: AbortSignal;
}

export type Containment = 'pdeathsig+flock' | 'pdeathsig' | 'none';

export interface RedisServer {
  url: string;
  pid: number;
  dir: string;
  /** How the server is tied to this process (see the top of this file). */
  containment: Containment;
  child: ChildProcess;
  exited: Promise<void>;
  /** SIGKILL, wait for the exit. */
  kill(): Promise<void>;
  /** SIGTERM (Redis flushes its AOF and exits), SIGKILL after `graceMs`. */
  stop(graceMs?: number): Promise<void>;
}

/** Another redis-server still holds the dir's lock. */
export class RedisDirBusyError extends InvalidInputError {}

const LOCK_CONFLICT_EXIT = 75;
const INSTALL_HINT =
  'redis-server is not installed; install it (Debian/Ubuntu: `sudo apt-get install redis-server`, macOS: `brew install redis`), or pass --redis-url to use a Redis you run';

let tools: { setpriv: boolean; flock: boolean } | undefined;

/** Which containment tools this machine has (probed once). */
function containmentTools(): { setpriv: boolean; flock: boolean } {
  const helpOf = (command: string) =>
    spawnSync(command, ['--help'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).stdout ?? '';
  tools ??= {
    setpriv: process.platform === 'linux' && helpOf('setpriv').includes('--pdeathsig'),
    flock: process.platform === 'linux' && helpOf('flock').includes('--no-fork'),
  };
  return tools;
}

export function redisServerInstalled(): boolean {
  return !spawnSync('redis-server', ['--version'], { stdio: 'ignore' }).error;
}

export function pidFileOf(dir: string): string {
  return join(dir, 'redis.pid');
}

export async function startRedisServer(options: RedisServerOptions): Promise<RedisServer> {
  if (!redisServerInstalled()) throw new InvalidInputError(INSTALL_HINT);
  const { dir } = options;
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const port = options.port ?? 0;
  const serverArgs = [
    '--port',
    String(port),
    ...(port > 0 ? ['--bind', options.bind ?? '127.0.0.1'] : []),
    ...(options.unixSocket ? ['--unixsocket', options.unixSocket, '--unixsocketperm', '700'] : []),
    '--dir',
    dir,
    '--save',
    '',
    '--appendonly',
    'yes',
    '--appendfsync',
    options.appendfsync ?? 'everysec',
    '--daemonize',
    'no',
    '--pidfile',
    pidFileOf(dir),
    '--logfile',
    join(dir, 'redis.log'),
  ];
  const { setpriv, flock } = containmentTools();
  // Each wrapper execs the next (no fork), so the pid is redis-server's own.
  const argv = [
    ...(setpriv ? ['setpriv', '--pdeathsig', 'TERM', '--'] : []),
    ...(flock
      ? [
          'flock',
          '--no-fork',
          '--nonblock',
          '--conflict-exit-code',
          String(LOCK_CONFLICT_EXIT),
          join(dir, 'redis.lock'),
        ]
      : []),
    'redis-server',
    ...serverArgs,
  ];
  const containment: Containment = setpriv ? (flock ? 'pdeathsig+flock' : 'pdeathsig') : 'none';
  // Its own process group: a Ctrl-C at the terminal signals the whole foreground group, and a redis-server
  // that stopped with it would leave `up`'s workers to close against no Redis; `up` stops it last instead.
  const child = spawn(argv[0]!, argv.slice(1), { stdio: 'ignore', detached: true });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.once('error', () => {}); // reported through the exit below
  const url =
    port > 0 ? `redis://${options.bind ?? '127.0.0.1'}:${port}` : `redis+unix://${options.unixSocket!}`;
  const gone = () => child.exitCode !== null || child.signalCode !== null;
  const kill = async () => {
    if (gone()) return;
    child.kill('SIGKILL');
    await exited;
  };
  const stop = async (graceMs = 10_000) => {
    if (gone()) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    await exited;
    clearTimeout(timer);
  };

  const deadline = Date.now() + (options.readyTimeoutMs ?? 15_000);
  for (;;) {
    if (gone()) {
      if (child.exitCode === LOCK_CONFLICT_EXIT && flock) {
        const holder = await pidFromFile(pidFileOf(dir));
        throw new RedisDirBusyError(
          `another redis-server${holder ? ` (pid ${holder})` : ''} is still running on ${dir}; stop it first`,
        );
      }
      throw new Error(`redis-server exited at start; see ${join(dir, 'redis.log')}`);
    }
    if (options.signal?.aborted) {
      await stop();
      throw options.signal.reason;
    }
    if (await pings(url, 1_000)) break;
    if (Date.now() > deadline) {
      await kill();
      throw new Error(`redis-server did not answer within the start timeout; see ${join(dir, 'redis.log')}`);
    }
    await sleep(50);
  }
  return { url, pid: child.pid!, dir, containment, child, exited, kill, stop };
}

/** One PING; true when the server answered within `timeoutMs`. */
export async function pings(url: string, timeoutMs = 1_000): Promise<boolean> {
  const client = clientFor(url, timeoutMs);
  try {
    await client.connect();
    return (await client.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    client.disconnect();
  }
}

function clientFor(url: string, timeoutMs: number): Redis {
  const unix = /^(?:redis\+)?unix:\/\/(.+)$/.exec(url);
  const options = {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    connectTimeout: timeoutMs,
    commandTimeout: timeoutMs,
  };
  const client = unix ? new Redis({ ...options, path: unix[1]! }) : new Redis(url, options);
  client.on('error', () => {});
  return client;
}

async function pidFromFile(path: string): Promise<number | undefined> {
  const pid = Number((await readFile(path, 'utf8').catch(() => '')).trim());
  return Number.isInteger(pid) && pid > 0 ? pid : undefined;
}

/** A live process whose command line is a redis-server (a recycled pid is not). */
function isRedisServer(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  if (process.platform !== 'linux') return true;
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('redis-server');
  } catch {
    return false;
  }
}

/**
 * Before an owner starts the server of `dir`: a server of that dir still
 * running (its owner died and it outlived it, or it is still exiting after the
 * parent-death signal) is shut down cleanly (SHUTDOWN flushes the AOF; SIGTERM
 * when it does not answer), never duplicated. Returns the pid it stopped.
 */
export async function stopStaleRedisServer(
  dir: string,
  socket: string,
  timeoutMs = 15_000,
): Promise<number | undefined> {
  const url = `redis+unix://${socket}`;
  const pid = await pidFromFile(pidFileOf(dir));
  const running = pid !== undefined && isRedisServer(pid);
  const answers = await pings(url, 1_000);
  if (!running && !answers) return undefined;
  if (answers) {
    const client = clientFor(url, 2_000);
    await client
      .connect()
      .then(() => client.call('SHUTDOWN'))
      .catch(() => {}) // the connection closing is the answer
      .finally(() => client.disconnect());
  } else if (running) {
    process.kill(pid, 'SIGTERM');
  }
  const deadline = Date.now() + timeoutMs;
  while ((pid !== undefined && isRedisServer(pid)) || (await pings(url, 500))) {
    if (Date.now() > deadline)
      throw new RedisDirBusyError(
        `a redis-server${pid ? ` (pid ${pid})` : ''} of ${dir} did not stop within ${timeoutMs / 1000} s; stop it first`,
      );
    await sleep(100);
  }
  await rm(socket, { force: true });
  return pid;
}
