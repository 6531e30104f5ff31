// Liveness of the processes that make an installation work, for /healthz:
// Redis answers, at least one worker consumes the queues, a scheduler beats.
import type { Redis } from 'ioredis';
import type { Keys, Queues } from '../../redis/index.js';
import { workerConfinement, type WorkerConfinement } from '../../plugins/index.js';

export const SCHEDULER_BEAT_MS = 5_000;

export async function beatScheduler(redis: Redis, keys: Keys, identity: string): Promise<void> {
  await redis.set(keys.schedulerHeartbeat, identity, 'PX', SCHEDULER_BEAT_MS * 3);
}

export interface Liveness {
  ok: boolean;
  redis: boolean;
  workers: number;
  scheduler: boolean;
  /** Per worker process, what confinement its plugin calls get on its host. */
  confinement: WorkerConfinement[];
}

export async function liveness(redis: Redis, keys: Keys, queues: Queues): Promise<Liveness> {
  try {
    await redis.ping();
  } catch {
    return { ok: false, redis: false, workers: 0, scheduler: false, confinement: [] };
  }
  const [workers, beat, confinement] = await Promise.all([
    queues.inspect.getWorkersCount(),
    redis.exists(keys.schedulerHeartbeat),
    workerConfinement(redis, keys),
  ]);
  return { ok: workers > 0 && beat === 1, redis: true, workers, scheduler: beat === 1, confinement };
}
