// What confinement each worker's calls get, as the worker itself found it on
// its own host (PROTOCOL §9.5): every worker writes its report at start and
// then every REPORT_EVERY_MS into one hash; /healthz and `plugin show` read
// the fresh ones (a stopped worker's report ages out, and is pruned).
import type { Redis } from 'ioredis';
import { z } from 'zod';
import type { Keys } from '../redis/index.js';

export const REPORT_EVERY_MS = 20_000;
/** A report older than this is a worker that stopped (or cannot reach Redis). */
const FRESH_MS = 3 * REPORT_EVERY_MS;

export interface WorkerConfinement {
  worker: string;
  mechanism: 'subreaper' | 'process-group';
  enforced: string[];
  missing: string[];
  /** Whether the worker refuses to run plugins unless all of it is in force. */
  required: boolean;
  at: string;
}

const reportSchema = z.object({
  worker: z.string(),
  mechanism: z.enum(['subreaper', 'process-group']),
  enforced: z.array(z.string()),
  missing: z.array(z.string()),
  required: z.boolean(),
  at: z.string(),
});

export async function reportConfinement(redis: Redis, keys: Keys, report: WorkerConfinement): Promise<void> {
  await redis.hset(keys.workerConfinement, report.worker, JSON.stringify(report));
}

export async function withdrawConfinement(redis: Redis, keys: Keys, worker: string): Promise<void> {
  await redis.hdel(keys.workerConfinement, worker);
}

/** The fresh reports, by worker; stale ones are removed on the way. */
export async function workerConfinement(redis: Redis, keys: Keys): Promise<WorkerConfinement[]> {
  const entries = await redis.hgetall(keys.workerConfinement);
  const fresh: WorkerConfinement[] = [];
  const stale: string[] = [];
  for (const [worker, text] of Object.entries(entries)) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    const report = reportSchema.safeParse(parsed);
    if (report.success && Date.now() - Date.parse(report.data.at) < FRESH_MS) fresh.push(report.data);
    else stale.push(worker);
  }
  if (stale.length > 0) await redis.hdel(keys.workerConfinement, ...stale);
  return fresh.sort((a, b) => (a.worker < b.worker ? -1 : 1));
}
