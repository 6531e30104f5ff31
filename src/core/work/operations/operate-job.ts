// The operate job: its payload and its retry policy (the queue itself is the
// redis room's plumbing, queues.ts). The job id is the operation's id, so a
// second enqueue of the same operation is a no-op.
import { z } from 'zod';

export const operateJobSchema = z.strictObject({ operationId: z.string().min(1) });
export type OperateJob = z.infer<typeof operateJobSchema>;

/** Attempts of one operate job; at most one of them dispatches the call (the dispatch mark). */
export const OPERATE_ATTEMPTS = 3;

export function operateJobId(operationId: string): string {
  return operationId;
}
