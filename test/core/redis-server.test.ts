// The one redis-server launcher (src/core/redis/redis-server.ts): a dir never gets a
// second server while its server runs, and the server dies with the process
// that started it, even when that process is SIGKILLed (parent-death signal).
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisDirBusyError, pings, startRedisServer } from '../../src/core/redis/redis-server.js';
import { requireBuiltCli } from '../support/cli-process.js';
import { REPO } from '../support/data-dir.js';
import { freePort } from '../support/redis.js';
import { waitFor } from '../support/wait.js';

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'switchyard-redis-server-'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('startRedisServer', () => {
  it('refuses a second server on a dir whose server still runs, and allows it once that one is gone', async () => {
    const first = await startRedisServer({ dir: join(dir, 'busy'), port: await freePort() });
    try {
      expect(first.containment).toBe('pdeathsig+flock');
      const second = startRedisServer({ dir: join(dir, 'busy'), port: await freePort() });
      await expect(second).rejects.toBeInstanceOf(RedisDirBusyError);
      await expect(second).rejects.toThrow(`pid ${first.pid}`);
      expect(await pings(first.url)).toBe(true);
    } finally {
      await first.stop();
    }
    const third = await startRedisServer({ dir: join(dir, 'busy'), port: await freePort() });
    expect(await pings(third.url)).toBe(true);
    await third.stop();
  });

  it('the server dies when the process that started it is SIGKILLed', async () => {
    requireBuiltCli();
    const port = await freePort();
    const owner = spawn(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `const { startRedisServer } = await import(${JSON.stringify(join(REPO, 'dist', 'core', 'redis', 'redis-server.js'))});
         const server = await startRedisServer({ dir: ${JSON.stringify(join(dir, 'owned'))}, port: ${port} });
         process.stdout.write(server.pid + '\\n');
         setInterval(() => {}, 1000);`,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let out = '';
    owner.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    await waitFor('the owner to start its redis-server', async () => /^\d+\n/.test(out), 15_000, 50);
    const pid = Number(out.trim());
    expect(alive(pid)).toBe(true);
    owner.kill('SIGKILL');
    await waitFor('the redis-server to die with its owner', async () => !alive(pid), 5_000, 50).catch(
      () => {},
    );
    try {
      expect(alive(pid), `redis-server ${pid} outlived its SIGKILLed owner`).toBe(false);
    } finally {
      if (alive(pid)) process.kill(pid, 'SIGKILL');
    }
  });
});
