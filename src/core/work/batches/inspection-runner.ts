// The inspection-job lifecycle (docs/ARCHITECTURE.md "Inspection jobs"): each
// project of a job is inspected and its outcome recorded once; transient
// plugin faults are retried with exponential backoff, every other failure is
// final for that project. A job that stops for another reason (Redis, shutdown)
// is retried by the queue and resumes where it stopped; after its last attempt,
// or when its workers kept dying, the rest of its projects is recorded failed.
// A cancelled batch (batch-service.ts `cancel`) starts no new inspection, and its calls
// running here are killed through their signal (cancelBatch). What each call
// is checked against is read once per job and kept while the call-state token
// stands (job-call-state.ts): one Redis command per call instead of a read of
// every record; outcomes are written together (PendingOutcomes). A job of a
// large slice gives the rest back to the fair queue when, on that same read,
// the contention generation moved since its slice was chosen (another batch
// now waits): the worker then takes a fairly chosen slice (fair-queue.ts).
import { RunningInspections, isBatchCancellation } from './batch-cancellation.js';
import type { BatchStore, ProjectOutcome } from './batch-store.js';
import { JobCallState } from './job-call-state.js';
import {
  ERROR_CODES,
  SwitchyardError,
  errorCode,
  FinalJobError,
  messageOf,
  sleep,
} from '../../platform/index.js';
import { CONTENDED_SLICE } from './fair-queue.js';
import { INSPECT_ATTEMPTS, INSPECT_BACKOFF_MS, type InspectJob } from './inspect-jobs.js';
import type { PluginService } from '../../plugins/index.js';
import { boundedMessage } from '../../safety/index.js';

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
  signal?: AbortSignal | undefined;
}

export class InspectionRunner {
  readonly #running = new RunningInspections();

  constructor(
    private readonly plugins: PluginService,
    private readonly batches: BatchStore,
    private readonly gate?: InspectionGate,
  ) {}

  /**
   * Runs one job; throws FinalJobError when it ended here for good, anything
   * else to be retried. `givenBack`: the projects from that place of the
   * batch on were not run and go back to the fair queue.
   */
  async runJob(
    data: InspectJob,
    attempt: InspectionAttempt,
  ): Promise<{ inspected: number; givenBack?: { start: number; count: number } }> {
    const { signal } = attempt;
    // A job taken again (retry, dead worker, the fair queue's repair) skips what is already recorded.
    const fresh = attempt.firstRun && !data.resumed;
    const pending = fresh ? data.projectIds : await this.batches.unrecorded(data.batchId, data.projectIds);
    const outcomes = new PendingOutcomes(this.batches, data.batchId, data.pluginId);
    const callState = new JobCallState(this.plugins, this.batches, data.batchId, data.pluginId, pending);
    // Only a fresh job gives back: its pending projects are its whole slice, in order, none recorded.
    const { start, generation } = data;
    const yieldAt = (index: number) =>
      fresh && start !== undefined && generation !== undefined && pending.length - index > CONTENDED_SLICE
        ? (now: string) => now !== String(generation)
        : undefined;
    let givenBack: { start: number; count: number } | undefined;
    try {
      for (const [index, projectId] of pending.entries()) {
        if (signal?.aborted) throw new Error('worker shutting down; the rest of this job will be retried');
        const outcome = await this.#inspectOne(data.batchId, projectId, callState, signal, yieldAt(index));
        // A cancelled batch's queued inspections never start (batch cancel records them).
        if (outcome === 'batch-cancelled') break;
        if (outcome === 'give-back') {
          givenBack = { start: start! + index, count: pending.length - index };
          break;
        }
        await outcomes.add(outcome);
      }
      await outcomes.flush();
      // A job taken again after its worker died may have recorded the batch's end without announcing it.
      if (!attempt.firstRun) await this.batches.announceIfEnded(data.batchId);
    } catch (error) {
      // What was inspected stays recorded, so a retry skips it (if Redis is down, it runs again).
      await outcomes.flush().catch(() => {});
      // Not a plugin outcome (Redis unreachable, shutdown): the job is retried and
      // resumes where it stopped; after its last attempt the rest is recorded failed.
      if (signal?.aborted || !attempt.finalAttempt) throw error;
      const message = boundedMessage(messageOf(error));
      await this.#recordRestFailed(data, errorCode(error), message);
      // BullMQ stores the reason with the job: redacted too.
      throw new FinalJobError(message);
    }
    return givenBack ? { inspected: givenBack.start - start!, givenBack } : { inspected: pending.length };
  }

  /** `batch cancel` was heard: kill this batch's calls running in this process; how many. */
  cancelBatch(batchId: string): number {
    return this.#running.cancel(batchId);
  }

  /** A job whose workers died `maxStalls + 1` times: what it did not record ends failed. */
  async endStalled(data: InspectJob, maxStalls: number): Promise<void> {
    await this.#recordRestFailed(
      data,
      ERROR_CODES.WORKER_LOST,
      `the workers running this inspection died ${maxStalls + 1} times`,
    );
  }

  /** Records every project of a job that has no outcome yet as failed. */
  async #recordRestFailed(data: InspectJob, code: string, message: string): Promise<void> {
    const rest = await this.batches.unrecorded(data.batchId, data.projectIds);
    await this.batches.recordAll(
      data.batchId,
      data.pluginId,
      rest.map((projectId) => ({ projectId, status: 'failed', error: { code, message } })),
    );
  }

  /**
   * One project of a batch: retried with exponential backoff for transient
   * failures only; its one outcome (succeeded, failed or cancelled) to be
   * recorded, 'batch-cancelled' when the batch was cancelled before it started,
   * or 'give-back' when `yieldIf` says another batch now waits.
   */
  async #inspectOne(
    batchId: string,
    projectId: string,
    callState: JobCallState,
    signal?: AbortSignal,
    yieldIf?: (generation: string) => boolean,
  ): Promise<ProjectOutcome | 'batch-cancelled' | 'give-back'> {
    for (let attempt = 1; ; attempt += 1) {
      await this.gate?.clear(signal); // every attempt is a new plugin call
      const call = this.#running.track(batchId, signal);
      try {
        // Tracked first, then checked: a cancel can no longer fall between the two.
        const { cancelled, state, generation } = await callState.current();
        if (cancelled) return 'batch-cancelled';
        if (attempt === 1 && yieldIf?.(generation)) return 'give-back';
        const result = await this.plugins.inspectWith(state, projectId, {
          signal: call.signal,
          batchId,
        });
        return { projectId, status: 'succeeded', result };
      } catch (error) {
        if (isBatchCancellation(call.signal)) {
          return {
            projectId,
            status: 'cancelled',
            error: {
              code: ERROR_CODES.CANCELLED,
              message: 'the batch was cancelled while this inspection ran; its processes were killed',
            },
          };
        }
        if (signal?.aborted) throw new Error('worker shutting down; the inspection will be retried');
        if (!(error instanceof SwitchyardError)) throw error;
        if (error.transient && attempt < INSPECT_ATTEMPTS) {
          await sleep(INSPECT_BACKOFF_MS * 2 ** (attempt - 1), signal);
          continue;
        }
        return {
          projectId,
          status: 'failed',
          error: { code: errorCode(error), message: boundedMessage(messageOf(error)) },
        };
      } finally {
        call.release();
      }
    }
  }
}

/**
 * Outcomes are written together once the first of them is this old: progress
 * stays live for a person watching, and a loaded machine, where calls are
 * slow, still writes a job's outcomes in few script calls (each is ~8 commands).
 */
export const RECORD_EVERY_MS = 500;

/**
 * A job's outcomes on their way to Redis: one script call per job (of up to
 * 100 projects) instead of one per project, and sooner when the first waiting
 * outcome is RECORD_EVERY_MS old (slow plugins, long jobs).
 */
class PendingOutcomes {
  #outcomes: ProjectOutcome[] = [];
  #since = 0;

  constructor(
    private readonly batches: BatchStore,
    private readonly batchId: string,
    private readonly pluginId: string,
  ) {}

  async add(outcome: ProjectOutcome): Promise<void> {
    if (this.#outcomes.length === 0) this.#since = performance.now();
    this.#outcomes.push(outcome);
    if (performance.now() - this.#since >= RECORD_EVERY_MS) await this.flush();
  }

  async flush(): Promise<void> {
    const outcomes = this.#outcomes;
    this.#outcomes = [];
    await this.batches.recordAll(this.batchId, this.pluginId, outcomes);
  }
}
