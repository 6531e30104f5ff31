// A worker's watch over its own progress. The failure BullMQ users report most
// after a Redis failover is a worker that stays connected but silently stops
// taking jobs (its blocking pull hangs on a dead or demoted connection). So
// each worker checks: jobs wait in my queue, I have a free slot, I am neither
// paused nor closing, and I have taken no job for `stallMs` → I am stuck:
// reconnect. It reads only what it can see itself (its events, its queue's
// counts), so it needs no other process to notice.
import { Queue, type Worker } from 'bullmq';

export interface PullWatchdogOptions {
  /** How long a worker with a free slot may take no job while jobs wait (default 15 s). */
  stallMs?: number;
  /** How often to look (default stallMs / 3). */
  checkEveryMs?: number;
  /** Jobs ready for this worker now; default: wait + prioritized of its queue. */
  waiting?: (worker: Worker) => Promise<number>;
  log?: (event: string, fields?: Record<string, unknown>) => void;
}

export interface PullWatchdog {
  /** Reconnects done so far, per queue name. */
  readonly reconnects: Map<string, number>;
  stop(): Promise<void>;
}

interface Watched {
  worker: Worker;
  lastTakenAt: number;
  inFlight: number;
}

/**
 * Watches `workers`; calls `reconnect(worker)` for each one found stuck (one
 * call at a time per worker, and its clock restarts after each call).
 */
export function watchPulling(
  workers: readonly Worker[],
  reconnect: (worker: Worker, reason: string) => Promise<void>,
  options: PullWatchdogOptions = {},
): PullWatchdog {
  const stallMs = options.stallMs ?? 15_000;
  const log = options.log ?? (() => {});
  const reconnects = new Map<string, number>();
  const queues = new Map<Worker, Queue>();
  const waiting =
    options.waiting ??
    (async (worker: Worker) => {
      let queue = queues.get(worker);
      if (!queue) {
        // The worker's own connection options: the same Redis (or sentinels) it pulls from.
        queue = new Queue(worker.name, {
          connection: worker.opts.connection,
          ...(worker.opts.prefix === undefined ? {} : { prefix: worker.opts.prefix }),
        });
        queue.on('error', () => {});
        queues.set(worker, queue);
      }
      const counts = await queue.getJobCounts('wait', 'prioritized');
      return (counts.wait ?? 0) + (counts.prioritized ?? 0);
    });

  const watched: Watched[] = workers.map((worker) => {
    const entry: Watched = { worker, lastTakenAt: Date.now(), inFlight: 0 };
    worker.on('active', () => {
      entry.lastTakenAt = Date.now();
      entry.inFlight += 1;
    });
    const ended = () => (entry.inFlight = Math.max(0, entry.inFlight - 1));
    worker.on('completed', ended);
    worker.on('failed', (job) => {
      if (job) ended();
    });
    return entry;
  });

  let checking = false;
  const check = async () => {
    if (checking) return;
    checking = true;
    try {
      for (const entry of watched) {
        const { worker } = entry;
        if (worker.isPaused() || worker.closing) {
          entry.lastTakenAt = Date.now();
          continue;
        }
        const idleMs = Date.now() - entry.lastTakenAt;
        const busy = activeJobs(worker) ?? entry.inFlight;
        if (idleMs < stallMs || busy >= worker.concurrency) continue;
        const ready = await waiting(worker).catch(() => 0);
        if (ready === 0) {
          entry.lastTakenAt = Date.now(); // idle because there is nothing to take
          continue;
        }
        const reason = `${ready} job(s) waiting, ${busy}/${worker.concurrency} slots busy, none taken for ${idleMs} ms`;
        log('pull-stalled', { queue: worker.name, reason });
        reconnects.set(worker.name, (reconnects.get(worker.name) ?? 0) + 1);
        // A job the old connection had taken ends as failed or stalled, never as completed here.
        entry.inFlight = 0;
        await reconnect(worker, reason).catch((error: Error) =>
          log('pull-reconnect-failed', { queue: worker.name, error: error.message }),
        );
        entry.lastTakenAt = Date.now();
      }
    } finally {
      checking = false;
    }
  };
  const timer = setInterval(() => void check(), options.checkEveryMs ?? Math.max(250, stallMs / 3));
  timer.unref();

  return {
    reconnects,
    async stop() {
      clearInterval(timer);
      await Promise.all([...queues.values()].map((queue) => queue.close().catch(() => {})));
    },
  };
}

/**
 * Jobs the worker is running now, from its lock manager (which tracks every
 * job from the moment it is taken until its processor returns); undefined
 * where BullMQ no longer exposes it, and the count from events is used.
 */
function activeJobs(worker: Worker): number | undefined {
  const manager = (worker as unknown as { lockManager?: { getActiveJobCount?(): number } }).lockManager;
  return typeof manager?.getActiveJobCount === 'function' ? manager.getActiveJobCount() : undefined;
}

/**
 * The default recovery: drop and re-open the worker's connections. ioredis
 * reconnects (in Sentinel mode it asks the sentinels for the current primary
 * first), and BullMQ re-arms its blocking pull on the fresh blocking
 * connection — the recovery BullMQ's own stuck-connection check uses.
 */
export async function reconnectWorker(worker: Worker): Promise<void> {
  const { backend } = worker;
  (await backend.client).disconnect(true);
  await backend.disconnectBlocking(false);
  await backend.reconnectBlocking();
}
