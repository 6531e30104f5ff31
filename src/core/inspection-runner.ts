// The inspection-job lifecycle (docs/ARCHITECTURE.md "Inspection jobs"): each
// project of a job is inspected and its outcome recorded once; transient
// plugin faults are retried with exponential backoff, every other failure is
// final for that project. A job that stops for another reason (Redis, shutdown)
// is retried by the queue and resumes where it stopped; after its last attempt,
// or when its workers kept dying, the rest of its projects is recorded failed.
// A cancelled batch (batch-control.ts) starts no new inspection, and its calls
// running here are killed through their signal (cancelBatch).
import { RunningInspections, isBatchCancellation } from './batch-cancellation.js';
import type { BatchStore } from './batches.js';
import { SwitchyardError, errorCode } from './errors.js';
import { FinalJobError, messageOf } from './job-errors.js';
import { INSPECT_ATTEMPTS, INSPECT_BACKOFF_MS, type InspectJob } from './jobs.js';
import type { PluginService } from './plugins.js';
import { boundedMessage } from './redact.js';
import { sleep } from './sleep.js';

/** Something that may hold new inspection calls back for a while (operations first). */
export interface InspectionGate {
  clear(signal?: AbortSignal): Promise<void>;
}

export interface InspectionAttempt {
  /** The job's first run: nothing of it can be recorded yet. */
  firstRun: boolean;
  /** No attempt of the job follows this one. */
  finalAttempt: boolean;
  /** Aborts on worker shutdown. */
  signal?: AbortSignal;
}

export const CANCELLED_CODE = 'CANCELLED';

export class InspectionRunner {
  readonly #running = new RunningInspections();

  constructor(
    private readonly plugins: PluginService,
    private readonly batches: BatchStore,
    private readonly gate?: InspectionGate,
  ) {}

  /** Runs one job; throws FinalJobError when it ended here for good, anything else to be retried. */
  async runJob(data: InspectJob, attempt: InspectionAttempt): Promise<{ inspected: number }> {
    const { signal } = attempt;
    // A job taken again (retry, dead worker) skips what is already recorded.
    const pending = attempt.firstRun
      ? data.projectIds
      : await this.batches.unrecorded(data.batchId, data.projectIds);
    try {
      for (const projectId of pending) {
        if (signal?.aborted) throw new Error('worker shutting down; the rest of this job will be retried');
        // A cancelled batch's queued inspections never start (batch cancel records them).
        if (await this.batches.isCancelled(data.batchId)) break;
        await this.#inspectOne(data.batchId, data.pluginId, projectId, signal);
      }
    } catch (error) {
      // Not a plugin outcome (Redis unreachable, shutdown): the job is retried and
      // resumes where it stopped; after its last attempt the rest is recorded failed.
      if (signal?.aborted || !attempt.finalAttempt) throw error;
      await this.#recordRestFailed(data, errorCode(error), boundedMessage(messageOf(error)));
      throw new FinalJobError(messageOf(error));
    }
    return { inspected: pending.length };
  }

  /** `batch cancel` was heard: kill this batch's calls running in this process; how many. */
  cancelBatch(batchId: string): number {
    return this.#running.cancel(batchId);
  }

  /** A job whose workers died `maxStalls + 1` times: what it did not record ends failed. */
  async endStalled(data: InspectJob, maxStalls: number): Promise<void> {
    await this.#recordRestFailed(
      data,
      'WORKER_LOST',
      `the workers running this inspection died ${maxStalls + 1} times`,
    );
  }

  /** Records every project of a job that has no outcome yet as failed. */
  async #recordRestFailed(data: InspectJob, code: string, message: string): Promise<void> {
    for (const projectId of await this.batches.unrecorded(data.batchId, data.projectIds)) {
      await this.batches.record(data.batchId, data.pluginId, {
        projectId,
        status: 'failed',
        error: { code, message },
      });
    }
  }

  /**
   * One project of a batch: retried with exponential backoff for transient
   * failures only, then recorded once (succeeded or failed).
   */
  async #inspectOne(batchId: string, pluginId: string, projectId: string, signal?: AbortSignal) {
    for (let attempt = 1; ; attempt += 1) {
      await this.gate?.clear(signal); // every attempt is a new plugin call
      const call = this.#running.track(batchId, signal);
      try {
        // Tracked first, then checked: a cancel can no longer fall between the two.
        if (await this.batches.isCancelled(batchId)) return;
        const result = await this.plugins.inspect(pluginId, projectId, { signal: call.signal });
        await this.batches.record(batchId, pluginId, { projectId, status: 'succeeded', result });
        return;
      } catch (error) {
        if (isBatchCancellation(call.signal)) {
          await this.batches.record(batchId, pluginId, {
            projectId,
            status: 'cancelled',
            error: {
              code: CANCELLED_CODE,
              message: 'the batch was cancelled while this inspection ran; its processes were killed',
            },
          });
          return;
        }
        if (signal?.aborted) throw new Error('worker shutting down; the inspection will be retried');
        if (!(error instanceof SwitchyardError)) throw error;
        if (error.transient && attempt < INSPECT_ATTEMPTS) {
          await sleep(INSPECT_BACKOFF_MS * 2 ** (attempt - 1), signal);
          continue;
        }
        await this.batches.record(batchId, pluginId, {
          projectId,
          status: 'failed',
          error: { code: errorCode(error), message: boundedMessage(messageOf(error)) },
        });
        return;
      } finally {
        call.release();
      }
    }
  }
}
