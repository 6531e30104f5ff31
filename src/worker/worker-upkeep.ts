// What every worker does on timers besides taking jobs: it shares its slots
// with the fair queue of inspections (and repairs and fills that queue's
// buffer), and repairs what a crash left undone in any rollout.
import { RECONCILE_EVERY_MS } from '../core/work/batches/index.js';
import type { Runtime } from '../core/runtime/index.js';
import type { WorkerLog } from './worker-log.js';

export interface UpkeepOptions {
  /** This worker's inspect slots: they size the fair queue's buffer. */
  concurrency: number;
  rolloutSweepMs: number;
  log: WorkerLog;
}

/** Starts the timers (the fair queue's first heartbeat is awaited); `stop` ends them and withdraws the slots. */
export async function startUpkeep(
  runtime: Runtime,
  options: UpkeepOptions,
): Promise<{ stop(): Promise<void> }> {
  const { batches, rollouts, identity } = runtime;
  const { log } = options;
  const shareSlots = () =>
    batches
      .shareSlots(identity, options.concurrency)
      .then((repaired) => repaired > 0 && log('fair-slices-repaired', { repaired }))
      .catch((error: Error) => log('fair-reconcile-failed', { error: error.message }));
  await shareSlots();
  const sharing = setInterval(() => void shareSlots(), RECONCILE_EVERY_MS);
  sharing.unref();
  const sweeping = setInterval(
    () =>
      void rollouts.sweep().catch((error: Error) => log('rollout-sweep-failed', { error: error.message })),
    options.rolloutSweepMs,
  );
  sweeping.unref();
  return {
    async stop() {
      clearInterval(sharing);
      clearInterval(sweeping);
      await batches.withdrawSlots(identity).catch(() => {});
    },
  };
}
