// How a core runner tells the queue shell what to do with a job, without
// knowing the queue library: end it for good, or let the queue retry it
// (any other error).

/** The job is over: its record is written; the queue must not try it again. */
export class FinalJobError extends Error {}

export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
