// A Redis primary, one replica and three sentinels on free loopback ports, each
// in its own temp dir, for the Sentinel failover suite. The primary can be
// killed with -9; the sentinels promote the replica.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { freePort } from '../support/redis.js';
import { waitFor } from '../support/wait.js';

export const PRIMARY_NAME = 'sytest-primary';

export interface SentinelTopology {
  /** redis+sentinel://127.0.0.1:a,127.0.0.1:b,127.0.0.1:c/<name> */
  url: string;
  primaryPort: number;
  replicaPort: number;
  /** The port the sentinels name as primary now. */
  currentPrimaryPort(): Promise<number>;
  killPrimary(): Promise<void>;
  stop(): Promise<void>;
}

export async function startSentinelTopology(): Promise<SentinelTopology> {
  const dir = await mkdtemp(join(tmpdir(), 'switchyard-sentinel-'));
  const children: ChildProcess[] = [];
  const start = (args: string[], name: string) => {
    const child = spawn('redis-server', [...args, '--logfile', join(dir, `${name}.log`)], {
      stdio: 'ignore',
    });
    children.push(child);
    return child;
  };
  const dataNode = async (name: string, port: number, extra: string[]) => {
    const nodeDir = join(dir, name);
    await mkdir(nodeDir, { recursive: true });
    const child = start(
      [
        '--port',
        String(port),
        '--bind',
        '127.0.0.1',
        '--dir',
        nodeDir,
        '--save',
        '',
        '--appendonly',
        'yes',
        '--appendfsync',
        'everysec',
        ...extra,
      ],
      name,
    );
    await ping(port);
    return child;
  };

  const primaryPort = await freePort();
  const replicaPort = await freePort();
  const primary = await dataNode('primary', primaryPort, []);
  await dataNode('replica', replicaPort, ['--replicaof', '127.0.0.1', String(primaryPort)]);
  await waitFor('the replica to sync', async () => {
    const info = await command(replicaPort, (redis) => redis.info('replication'));
    return /master_link_status:up/.test(info);
  });

  const sentinelPorts: number[] = [];
  for (let index = 0; index < 3; index += 1) {
    const port = await freePort();
    sentinelPorts.push(port);
    const config = join(dir, `sentinel-${index}.conf`);
    await writeFile(
      config,
      [
        `port ${port}`,
        'bind 127.0.0.1',
        `dir ${dir}`,
        `sentinel monitor ${PRIMARY_NAME} 127.0.0.1 ${primaryPort} 2`,
        `sentinel down-after-milliseconds ${PRIMARY_NAME} 1000`,
        `sentinel failover-timeout ${PRIMARY_NAME} 5000`,
        `sentinel parallel-syncs ${PRIMARY_NAME} 1`,
        '',
      ].join('\n'),
    );
    start([config, '--sentinel'], `sentinel-${index}`);
    await ping(port);
  }
  // Every sentinel must know the replica and its peers before a failover can be agreed.
  await waitFor(
    'the sentinels to see the replica and each other',
    async () => {
      for (const port of sentinelPorts) {
        const replicas = (await command(port, (redis) =>
          redis.call('SENTINEL', 'REPLICAS', PRIMARY_NAME),
        )) as unknown[];
        const sentinels = (await command(port, (redis) =>
          redis.call('SENTINEL', 'SENTINELS', PRIMARY_NAME),
        )) as unknown[];
        if (replicas.length < 1 || sentinels.length < 2) return false;
      }
      return true;
    },
    30_000,
    200,
  );

  const currentPrimaryPort = async () => {
    const [, port] = (await command(sentinelPorts[0]!, (redis) =>
      redis.call('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', PRIMARY_NAME),
    )) as [string, string];
    return Number(port);
  };

  return {
    url: `redis+sentinel://${sentinelPorts.map((port) => `127.0.0.1:${port}`).join(',')}/${PRIMARY_NAME}`,
    primaryPort,
    replicaPort,
    currentPrimaryPort,
    async killPrimary() {
      if (primary.exitCode !== null || primary.signalCode !== null) return;
      await new Promise<void>((resolve) => {
        primary.once('exit', () => resolve());
        primary.kill('SIGKILL');
      });
    },
    async stop() {
      await Promise.all(
        children.map(
          (child) =>
            new Promise<void>((resolve) => {
              if (child.exitCode !== null || child.signalCode !== null) return resolve();
              child.once('exit', () => resolve());
              child.kill('SIGKILL');
            }),
        ),
      );
      await rm(dir, { recursive: true, force: true });
    },
  };
}

async function command<T>(port: number, run: (redis: Redis) => Promise<T>): Promise<T> {
  const redis = new Redis({ port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 0 });
  redis.on('error', () => {});
  try {
    await redis.connect();
    return await run(redis);
  } finally {
    redis.disconnect();
  }
}

async function ping(port: number): Promise<void> {
  await waitFor(
    `redis-server on port ${port}`,
    () => command(port, (redis) => redis.ping()).catch(() => undefined),
    10_000,
  );
}
