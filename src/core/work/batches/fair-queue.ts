// The fair queue of inspections (docs/adr/0010-fair-share-inspections.md,
// ARCHITECTURE.md "Inspection jobs"). A batch's projects are not all put into
// BullMQ: its state waits in Redis (fair:batches), and fair-pick.lua hands
// out one slice at a time — by priority class, then the unit (team or
// requester) with the least virtual time, then round robin over the unit's
// requesters and their batches, in order within a batch. BullMQ's inspect
// queue holds only the slices chosen (the live worker slots plus one). The
// queue is fed when a batch is created, when a worker ends a slice, and by a
// one-second timer in each worker that also repairs: a slice is recorded
// before its job is added, so a record without a job (a process died between
// the two, Redis lost its last second) is added again.
import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { readEnv } from '../../platform/index.js';
import { scriptsOn, type Keys } from '../../redis/index.js';
import { INSPECT_ATTEMPTS, INSPECT_BACKOFF_MS, inspectJobSchema } from './inspect-jobs.js';

export const PRIORITIES = ['high', 'normal', 'low'] as const;
export type Priority = (typeof PRIORITIES)[number];

/** The least projects per slice while another batch has work too (a slice is projectsPerJob ÷ the batches with work, at least this). */
export const CONTENDED_SLICE = 1;
/** Every this-many-th pick serves the lowest class with work, so no batch starves behind `high`. */
export const PRIORITY_AGING = 10;
/** A slice record this old without its job is added again (the window between record and add). */
export const REPAIR_GRACE_MS = 10_000;
/** A worker's slots count this long after its last heartbeat. */
export const SLOTS_TTL_MS = 5_000;
/** The reconcile timer of each worker. */
export const RECONCILE_EVERY_MS = 1_000;
/** At most this many slices per fill (a fill also ends at a full buffer or an empty queue). */
const FILL_MAX = 256;

/** Who a batch's calls count for: the requester, its team (when it has one) and the class. */
export interface FairShare {
  requester: string;
  team?: string;
  priority: Priority;
}

/** A slice handed out (fair-slices hash). */
interface SliceRecord {
  b: string;
  p: string;
  st: number;
  k: number;
  at: number;
  g: number;
}

/** `fifo`: the benchmark's switch back to one FIFO queue (docs/ENVIRONMENT.md). */
export function inspectOrder(env: NodeJS.ProcessEnv = process.env): 'fair' | 'fifo' {
  const value = readEnv('SWITCHYARD_INSPECT_ORDER', env);
  if (value === undefined || value === '' || value === 'fair') return 'fair';
  if (value === 'fifo') return 'fifo';
  throw new Error(`SWITCHYARD_INSPECT_ORDER must be fair or fifo, not ${JSON.stringify(value)}`);
}

export class FairQueue {
  constructor(
    private readonly redis: Redis,
    private readonly keys: Keys,
    private readonly queue: Queue,
  ) {}

  /** A new batch joins (its project list is already recorded), then the buffer is filled. */
  async enter(batchId: string, pluginId: string, total: number, share: FairShare): Promise<void> {
    const { keys } = this;
    const unit = share.team ? `team:${share.team}` : `user:${share.requester}`;
    const others = await scriptsOn(this.redis).fairEnter(
      [keys.fairBatches, keys.fairVtimes, keys.fairGeneration],
      batchId,
      JSON.stringify({
        p: pluginId,
        n: total,
        cls: PRIORITIES.indexOf(share.priority),
        unit,
        r: share.requester,
        o: Date.now(),
      }),
    );
    if (others > 0) await this.#withdrawQueued(batchId);
    await this.fill();
  }

  /**
   * Contention began: the other batches' large slices still queued (no worker took
   * them) go back to the front of their batches, so the buffer's place goes to a fairly
   * chosen slice at once instead of to a job that a worker would take only to give it
   * back. A job a worker takes meanwhile is locked, and BullMQ refuses to remove it;
   * a job taken before (a retry, or added again by the repair) is left to its worker.
   */
  async #withdrawQueued(entered: string): Promise<number> {
    const { keys } = this;
    const [records, holders] = await Promise.all([
      this.redis.hgetall(keys.fairSlices),
      this.redis.hgetall(keys.fairHolders),
    ]);
    let withdrawn = 0;
    for (const [sliceId, raw] of Object.entries(records)) {
      const record = JSON.parse(raw) as SliceRecord;
      if (record.b === entered || record.k <= CONTENDED_SLICE || holders[sliceId] !== undefined) continue;
      const job = await this.queue.getJob(sliceId);
      if (!job || job.attemptsStarted > 0 || (job.data as { resumed?: boolean }).resumed) continue;
      // 1 only while no worker holds it (a finished job's record is gone: its give-back is dropped).
      if ((await this.queue.remove(sliceId)) !== 1) continue;
      await this.sliceEnded(record.b, sliceId, { start: record.st, count: record.k });
      withdrawn += 1;
    }
    return withdrawn;
  }

  /** Hands out slices until the buffer is full or nothing waits; how many were added. */
  async fill(): Promise<number> {
    const { keys } = this;
    const scripts = scriptsOn(this.redis);
    let added = 0;
    while (added < FILL_MAX) {
      const [kind, sliceId, batchId, pluginId, start, count, generation] = await scripts.fairPick(
        [
          keys.fairBatches,
          keys.fairSlices,
          keys.fairVtimes,
          keys.teams,
          keys.fairWorkerSlots,
          keys.fairGeneration,
          keys.fairCounters,
          keys.fairHolders,
        ],
        Date.now(),
        CONTENDED_SLICE,
        PRIORITY_AGING,
      );
      if (kind !== 'slice') break;
      await this.#add(sliceId!, { b: batchId!, p: pluginId!, st: start!, k: count!, at: 0, g: generation! });
      added += 1;
    }
    return added;
  }

  /**
   * A slice's job ended for good: its record goes, and with `giveBack` the
   * projects from that place on go back to the front of their batch.
   */
  async sliceEnded(batchId: string, sliceId: string, giveBack?: { start: number; count: number }) {
    const { keys } = this;
    await scriptsOn(this.redis).fairSliceEnd(
      [keys.fairBatches, keys.fairSlices, keys.batch(batchId), keys.fairHolders],
      batchId,
      sliceId,
      giveBack ? giveBack.start : '',
      giveBack ? giveBack.count : 0,
    );
  }

  /** The batch leaves the queue; its slices' jobs are removed (a running one stays: its worker sees the mark). */
  async cancel(batchId: string): Promise<void> {
    const { keys } = this;
    const slices = await scriptsOn(this.redis).fairCancel(
      [keys.fairBatches, keys.fairSlices, keys.fairHolders],
      batchId,
    );
    await Promise.all(slices.map((id) => this.queue.remove(id).catch(() => 0)));
  }

  /** This worker's inspect slots, counted for SLOTS_TTL_MS (the buffer is their sum plus one). */
  async heartbeat(identity: string, slots: number): Promise<void> {
    await this.redis.hset(this.keys.fairWorkerSlots, identity, `${slots}|${Date.now() + SLOTS_TTL_MS}`);
  }

  /**
   * The worker runs the slice's job: once its slots expire (killed), the
   * slice stops counting against the buffer, so the live workers are fed
   * while BullMQ has not yet seen the stall. A retaker overwrites the mark.
   */
  async taken(sliceId: string, identity: string): Promise<void> {
    await this.redis.hset(this.keys.fairHolders, sliceId, identity);
  }

  /** The worker stops: its slots no longer count. */
  async withdraw(identity: string): Promise<void> {
    await this.redis.hdel(this.keys.fairWorkerSlots, identity);
  }

  /**
   * Repairs, then fills: a slice recorded more than REPAIR_GRACE_MS ago whose
   * job is gone is added again as `resumed` (its runner skips what is recorded).
   */
  async reconcile(): Promise<{ repaired: number; added: number }> {
    const now = Date.now();
    const records = await this.redis.hgetall(this.keys.fairSlices);
    let repaired = 0;
    for (const [sliceId, raw] of Object.entries(records)) {
      const record = JSON.parse(raw) as SliceRecord;
      if (now - record.at < REPAIR_GRACE_MS) continue;
      if (await this.queue.getJob(sliceId)) continue;
      await this.#add(sliceId, record, true);
      repaired += 1;
    }
    return { repaired, added: await this.fill() };
  }

  /** The slice's job: its projects read from the batch's list. Adding an id twice is a no-op. */
  async #add(sliceId: string, record: SliceRecord, resumed = false): Promise<void> {
    const projectIds = await this.redis.lrange(
      this.keys.batchProjects(record.b),
      record.st,
      record.st + record.k - 1,
    );
    // The batch was deleted meanwhile (retention): nothing to run, and the record goes.
    if (projectIds.length === 0) return this.sliceEnded(record.b, sliceId);
    await this.queue.add(
      'inspect',
      inspectJobSchema.parse({
        batchId: record.b,
        pluginId: record.p,
        projectIds,
        start: record.st,
        generation: record.g,
        ...(resumed ? { resumed: true } : {}),
      }),
      {
        jobId: sliceId,
        attempts: INSPECT_ATTEMPTS,
        backoff: { type: 'exponential' as const, delay: INSPECT_BACKOFF_MS },
      },
    );
  }
}
