// The process entry points run until signalled: SIGTERM starts an orderly stop
// that is bounded by a deadline, even when that stop cannot finish (its Redis
// is gone), and a process whose `up` vanished (its IPC channel closed) stops.
import { spawn } from 'node:child_process';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startOwnedRedis, type OwnedRedis } from '../support/redis.js';
import { CLI, exitWithin, requireBuiltCli, spawnCli, stopAll, waitFor } from './support.js';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

let redis: OwnedRedis;
let dataDir: string;

beforeAll(async () => {
  requireBuiltCli();
  // Redis is killed and restarted below: every acknowledged write on disk first.
  redis = await startOwnedRedis({ appendfsync: 'always' });
  dataDir = await mkdtemp(join(tmpdir(), 'switchyard-cli-signals-'));
});

afterEach(async () => {
  await stopAll();
});

afterAll(async () => {
  await redis?.stop();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

const globals = () => ['--data-dir', dataDir, '--redis-url', redis.url, '--prefix', 'signals'];

describe('run until signalled', () => {
  it('SIGTERM to a worker whose Redis is gone ends it within its deadline', async () => {
    const worker = spawnCli([...globals(), 'worker', '--shutdown-deadline', '1000']);
    await waitFor(() => worker.output.stdout.includes('worker-ready'), 20_000, 'worker-ready');
    await redis.kill();
    try {
      const started = Date.now();
      process.kill(worker.pid!, 'SIGTERM');
      await exitWithin(worker, 15_000);
      // deadline 1 s + 5 s for closing the queues and Redis
      expect(Date.now() - started).toBeLessThan(10_000);
    } finally {
      await redis.restart();
    }
  });

  it('a scheduler started with an IPC channel stops when the channel closes (its parent gone)', async () => {
    const child = spawn(process.execPath, [CLI, ...globals(), 'scheduler'], {
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    });
    try {
      const ready = new Promise((resolve, reject) => {
        child.once('message', resolve);
        setTimeout(() => reject(new Error('no ready message within 20 s')), 20_000).unref();
      });
      await expect(ready).resolves.toMatchObject({ type: 'switchyard-ready' });
      child.disconnect(); // what the kernel does to the channel when `up` is SIGKILLed
      const [code] = await exitWithin(child, 10_000);
      expect(code).toBe(0);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });
});
