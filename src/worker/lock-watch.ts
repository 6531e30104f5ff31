// A worker cut off from Redis cannot renew its job locks; once a lock could
// have expired, another worker may take the job over (and end an operation
// OUTCOME_UNKNOWN, releasing its project). Before that moment the running call
// of that job must be gone (ARCHITECTURE.md "No overlap after a worker dies",
// PROTOCOL §9.5). BullMQ renews the locks; this watch records when each
// renewal that succeeded was sent and aborts a job whose lock is about to
// lapse without one.
import { Worker, type Job, type Processor, type WorkerOptions } from 'bullmq';
import { lapseMarginMs } from '../core/projects/index.js';
import { ABORT_REASONS } from '../core/platform/index.js';

export class LockWatchedWorker extends Worker {
  readonly #validUntil = new Map<string, number>();
  readonly #timers = new Map<string, NodeJS.Timeout>();
  readonly #lockMs: number;

  constructor(
    name: string,
    processor: Processor,
    options: WorkerOptions & { lockDuration: number },
    private readonly onLapse: (jobId: string) => void = () => {},
  ) {
    super(name, processor, options);
    this.#lockMs = options.lockDuration;
  }

  /** The job's lock was taken when it became active (`processedOn`, never later than now). */
  watch(job: Job): void {
    if (!job.id) return;
    const takenAt = Math.min(job.processedOn ?? Date.now(), Date.now());
    this.#arm(job.id, takenAt + this.#lockMs);
  }

  unwatch(jobId: string | undefined): void {
    if (!jobId) return;
    clearTimeout(this.#timers.get(jobId));
    this.#timers.delete(jobId);
    this.#validUntil.delete(jobId);
  }

  override async extendJobLocks(jobIds: string[], tokens: string[], duration: number): Promise<string[]> {
    const sentAt = Date.now();
    const failed = await super.extendJobLocks(jobIds, tokens, duration);
    for (const jobId of jobIds) {
      if (!failed.includes(jobId) && this.#timers.has(jobId)) this.#arm(jobId, sentAt + duration);
    }
    return failed;
  }

  override async close(force?: boolean): Promise<void> {
    for (const jobId of [...this.#timers.keys()]) this.unwatch(jobId);
    await super.close(force);
  }

  #arm(jobId: string, validUntil: number): void {
    if ((this.#validUntil.get(jobId) ?? 0) > validUntil) return;
    this.#validUntil.set(jobId, validUntil);
    clearTimeout(this.#timers.get(jobId));
    const delay = Math.max(0, validUntil - lapseMarginMs(this.#lockMs) - Date.now());
    this.#timers.set(
      jobId,
      setTimeout(() => {
        this.#timers.delete(jobId);
        this.#validUntil.delete(jobId);
        this.cancelJob(jobId, ABORT_REASONS.lockLost);
        this.onLapse(jobId);
      }, delay),
    );
  }
}
