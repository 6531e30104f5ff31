// The inspect job's rules: its payload, attempts and backoff, how a batch
// is cut into slices and what each slice's job is called. The fair queue
// (fair-queue.ts) chooses the slices; a job carries one.
import { z } from 'zod';

/**
 * One job inspects a slice of a batch's projects. `start` is the slice's
 * place in the batch's project list and `generation` the fair queue's
 * contention generation when it was chosen (a job without them came in FIFO
 * order: SWITCHYARD_INSPECT_ORDER=fifo, or queued before the fair queue);
 * `resumed`: the job was added again by the repair, so some of its projects
 * may already be recorded.
 */
export const inspectJobSchema = z.strictObject({
  batchId: z.string().min(1),
  pluginId: z.string().min(1),
  projectIds: z.array(z.string().min(1)).min(1).max(100),
  start: z.number().int().min(0).optional(),
  generation: z.number().int().min(0).optional(),
  resumed: z.boolean().optional(),
});
export type InspectJob = z.infer<typeof inspectJobSchema>;

/** Inspections: 3 attempts with exponential backoff (only transient failures retry). */
export const INSPECT_ATTEMPTS = 3;
export const INSPECT_BACKOFF_MS = 500;

/**
 * Projects per inspect job while a batch is the only one with work (the fair
 * queue cuts smaller slices when batches share the workers; fair-pick.lua
 * computes the same). BullMQ's per-job cost (about 30 Redis commands
 * and two Lua scripts to take and finish a job, ~1 KiB of Redis memory while
 * queued) is shared by the job's projects, so a batch goes in as few jobs as
 * still spread it over the worker slots: 24 to 47 jobs up to 2,400 projects
 * (one project each below 48), then 100 projects per job.
 */
export function projectsPerJob(total: number): number {
  return Math.max(1, Math.min(100, Math.floor(total / 24)));
}

/**
 * How many job ids a batch of `total` projects may have had in FIFO order:
 * as many as projectsPerJob makes, or as the smaller slices of earlier
 * versions (at least 64 jobs, up to 50 projects each) made for a batch queued
 * before an upgrade. `batch cancel` removes that many besides the fair
 * queue's slices; an id that never existed costs a no-op.
 */
export function inspectJobIds(total: number): number {
  const earlier = Math.max(1, Math.min(50, Math.ceil(total / 64)));
  return Math.max(Math.ceil(total / projectsPerJob(total)), Math.ceil(total / earlier));
}

/**
 * An inspect job's id is `<batchId>.<slice index>` (so `batch cancel` can
 * remove a batch's queued jobs by id, and adding a slice's job twice is a no-op).
 */
export function inspectJobId(batchId: string, sliceIndex: number): string {
  return `${batchId}.${sliceIndex}`;
}
