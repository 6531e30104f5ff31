// The worker's watch over its own pulling (src/worker/pull-watchdog.ts), on a
// real Redis with real BullMQ workers: a worker that is connected but takes no
// job while jobs wait is noticed and reconnected; one that is busy, paused or
// has nothing to take is left alone.
import { Queue, Worker } from 'bullmq';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { watchPulling, reconnectWorker, type PullWatchdog } from '../../src/worker/pull-watchdog.js';
import { createRedis, closeRedis } from '../../src/core/redis/connections.js';
import { uniquePrefix } from '../support/data-dir.js';
import { startOwnedRedis, type OwnedRedis } from '../support/redis.js';
import { sleep, waitFor } from '../support/wait.js';

let redis: OwnedRedis;
const cleanups: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  redis = await startOwnedRedis({ appendfsync: 'no' });
});
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
});
afterAll(async () => {
  await redis?.stop();
});

function setUp(
  name: string,
  processor: () => Promise<void>,
  options: { autorun?: boolean; concurrency?: number },
) {
  const connection = createRedis(redis.url, { forBullmq: true });
  const prefix = uniquePrefix(name);
  const queue = new Queue('q', { connection, prefix });
  const worker = new Worker('q', processor, {
    connection,
    prefix,
    autorun: options.autorun ?? true,
    concurrency: options.concurrency ?? 1,
  });
  worker.on('error', () => {});
  cleanups.push(
    () => closeRedis(connection),
    () => queue.close(),
    () => worker.close(true),
  );
  return { queue, worker };
}

function watch(workers: Worker[], reconnect: (worker: Worker) => Promise<void>): PullWatchdog {
  const watchdog = watchPulling(workers, reconnect, { stallMs: 600, checkEveryMs: 100 });
  cleanups.push(() => watchdog.stop());
  return watchdog;
}

describe('pull watchdog', () => {
  it('a connected worker that takes no job while jobs wait is reconnected, then takes them', async () => {
    // autorun: false is a worker whose pull loop is not running: connected, silent, jobs waiting.
    const done: string[] = [];
    const { queue, worker } = setUp('stuck', async () => void done.push('x'), { autorun: false });
    await worker.waitUntilReady();
    await queue.addBulk(Array.from({ length: 5 }, (_, index) => ({ name: 'j', data: { index } })));
    const reasons: string[] = [];
    const watchdog = watch([worker], async (stuck) => {
      reasons.push('reconnect');
      await reconnectWorker(stuck);
      void stuck.run(); // the recovery this test stands for: pulling again
    });
    await waitFor('the jobs to be taken after the reconnect', async () => done.length === 5, 10_000);
    expect(reasons).toHaveLength(1);
    expect(watchdog.reconnects.get('q')).toBe(1);
    await sleep(1_000);
    expect(reasons, 'no second reconnect once it pulls again').toHaveLength(1);
  });

  it('leaves alone a worker whose slots are all busy, one that is paused, and one with nothing to take', async () => {
    let release!: () => void;
    const blocked = new Promise<void>((resolve) => (release = resolve));
    const busy = setUp('busy', () => blocked, { concurrency: 1 });
    await busy.queue.addBulk(Array.from({ length: 3 }, (_, index) => ({ name: 'j', data: { index } })));
    const paused = setUp('paused', async () => {}, {});
    await paused.worker.waitUntilReady();
    await paused.worker.pause(true);
    await paused.queue.add('j', {});
    const idle = setUp('idle', async () => {}, {});
    await idle.worker.waitUntilReady();
    const calls: string[] = [];
    watch([busy.worker, paused.worker, idle.worker], async (worker) => void calls.push(worker.opts.prefix!));
    await sleep(2_000);
    release();
    expect(calls).toEqual([]);
  });
});
