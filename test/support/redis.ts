// An owned Redis for each test file: from testcontainers when a Docker engine
// answers, otherwise a redis-server process from the launcher `up` uses
// (src/core/redis/redis-server.ts) on a free port with a temp dir; fault tests kill
// and restart it; it dies with the test process. Never the shared 6379 instance.
// AOF with appendfsync everysec, as `up` runs it: Redis writes each command to the
// file before it answers, so a SIGKILL of the server loses nothing acknowledged;
// `always` (an fsync per write, some milliseconds each on a VM's disk, which made the
// busiest files wait on the disk) is for the files that kill Redis and count on it.
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startRedisServer, type RedisServer } from '../../src/core/redis/redis-server.js';

export interface OwnedRedis {
  url: string;
  /** SIGKILL the server (data on disk survives per its AOF setting). */
  kill(): Promise<void>;
  /** Start it again on the same port and directory. */
  restart(): Promise<void>;
  /**
   * SIGSTOP / SIGCONT the server: connections stay open and every command
   * hangs, as in a network partition (the process-based server only).
   */
  pause(): void;
  resume(): void;
  stop(): Promise<void>;
}

export interface OwnedRedisOptions {
  /** everysec by default. */
  appendfsync?: 'always' | 'everysec' | 'no';
}

export async function startOwnedRedis(options: OwnedRedisOptions = {}): Promise<OwnedRedis> {
  if (await dockerAnswers()) return startContainer(options);
  return startProcess(options);
}

async function dockerAnswers(): Promise<boolean> {
  if (!process.env.DOCKER_HOST && !existsSync('/var/run/docker.sock')) return false;
  try {
    const { getContainerRuntimeClient } = await import('testcontainers');
    await getContainerRuntimeClient();
    return true;
  } catch {
    return false;
  }
}

async function startContainer(options: OwnedRedisOptions): Promise<OwnedRedis> {
  const { GenericContainer, Wait } = await import('testcontainers');
  const container = await new GenericContainer('redis:7')
    .withCommand(['redis-server', '--appendonly', 'yes', '--appendfsync', options.appendfsync ?? 'everysec'])
    .withExposedPorts(6379)
    .withWaitStrategy(Wait.forLogMessage('Ready to accept connections'))
    .start();
  const url = `redis://${container.getHost()}:${container.getMappedPort(6379)}`;
  return {
    url,
    async kill() {
      await container.exec(['sh', '-c', 'kill -9 1']).catch(() => {});
    },
    async restart() {
      await container.restart();
    },
    pause() {
      throw new Error('pause needs the process-based redis-server (no Docker engine)');
    },
    resume() {},
    async stop() {
      await container.stop();
    },
  };
}

async function startProcess(options: OwnedRedisOptions): Promise<OwnedRedis> {
  const dir = await mkdtemp(join(tmpdir(), 'switchyard-redis-'));
  const port = await freePort();
  let server: RedisServer | undefined;
  const launch = async () => {
    server = await startRedisServer({
      dir,
      port,
      appendfsync: options.appendfsync ?? 'everysec',
      readyTimeoutMs: 10_000,
    });
  };
  const kill = async () => {
    await server?.kill();
  };
  await launch();
  return {
    url: server!.url,
    kill,
    restart: launch,
    pause: () => process.kill(server!.pid, 'SIGSTOP'),
    resume: () => process.kill(server!.pid, 'SIGCONT'),
    async stop() {
      try {
        if (server) process.kill(server.pid, 'SIGCONT');
      } catch {
        // already gone
      }
      await kill();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}
