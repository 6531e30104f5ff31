// How a core runner tells the queue shell what to do with a job, without
// knowing the queue library: end it for good, or let the queue retry it
// (any other error).

/** The job is over: its record is written; the queue must not try it again. */
export class FinalJobError extends Error {}

export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Why the queue shell aborted a running job's signal: the worker is shutting
 * down, or the job's lock is about to lapse unrenewed (or, for an operation,
 * its project lock was lost). The rooms that cancel their own calls add their
 * reasons (OPERATION_CANCELLED, BATCH_CANCELLED).
 */
export const ABORT_REASONS = {
  shutdown: 'shutdown',
  lockLost: 'lock-lost',
} as const;

/** The reason an aborted signal carries (a string one of the reasons above or a room's), or undefined. */
export function abortReasonOf(signal: AbortSignal | undefined): string | undefined {
  if (!signal?.aborted) return undefined;
  return typeof signal.reason === 'string' ? signal.reason : undefined;
}
