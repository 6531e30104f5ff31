// Steering a batch after it was queued (CLI.md "Work"): cancel it, retry it
// (all or only the failed and cancelled projects), compare two batches and
// export one. The API, the CLI and the web UI all go through these.
//
// Cancel, from any process: the batch is marked first (a worker checks the
// mark before each project, so queued inspections never start), its queued
// jobs are removed, workers are told over pub/sub to kill the calls they run
// for it (supervisor AbortSignal: process group and descendants), and every
// project without an outcome is recorded `cancelled` (once, like any outcome).
import { appendAudit } from './audit.js';
import { diffBatches, type BatchDiff, type DiffSide } from './batch-diff.js';
import { exportBatch, type ExportFormat, type ExportRow } from './batch-export.js';
import { isBatchOver, type BatchView } from './batches.js';
import { InvalidInputError } from './errors.js';
import { CANCELLED_CODE } from './inspection-runner.js';
import { projectsPerJob } from './jobs.js';
import type { WorkService } from './work.js';

export class BatchControl {
  constructor(private readonly work: WorkService) {}

  /** Idempotent: a batch already over is returned as it is (the request is still audited). */
  async cancel(batchId: string, actor: string): Promise<BatchView> {
    const { batches, queues, keys, redis } = this.work;
    const batch = await this.work.getBatch(batchId);
    if (isBatchOver(batch)) {
      await this.#audit(actor, batchId, { outcome: 'already-over', state: batch.state });
      return batch;
    }
    const first = await batches.markCancelled(batchId, actor);
    const jobs = Math.ceil(batch.total / projectsPerJob(batch.total));
    // A job a worker holds is locked and stays; the worker skips its remaining projects (the mark).
    await Promise.all(
      Array.from({ length: jobs }, (_, index) => queues.inspect.remove(`${batchId}.${index}`).catch(() => 0)),
    );
    await redis.publish(keys.batchCancel, batchId);
    let cancelled = 0;
    const message = `the batch was cancelled by ${actor} before this inspection ended`;
    for await (const chunk of batches.outcomeChunks(batchId)) {
      for (const [projectId, outcome] of chunk) {
        if (outcome !== 'pending') continue;
        const recorded = await batches.record(batchId, batch.pluginId, {
          projectId,
          status: 'cancelled',
          error: { code: CANCELLED_CODE, message },
        });
        if (recorded) cancelled += 1;
      }
    }
    await this.#audit(actor, batchId, { outcome: first ? 'cancelled' : 'repeated', cancelled });
    return this.work.getBatch(batchId);
  }

  /** A new batch over the same plugin and projects (only failed and cancelled ones with failedOnly). */
  async retry(batchId: string, options: { failedOnly?: boolean }, actor: string): Promise<BatchView> {
    const source = await this.work.getBatch(batchId);
    let projectIds = await this.work.batches.projectIds(batchId);
    if (options.failedOnly) {
      const again = new Set(
        (source.results ?? []).filter((outcome) => outcome.status !== 'succeeded').map((o) => o.projectId),
      );
      projectIds = projectIds.filter((id) => again.has(id));
    }
    // Projects removed since are left out; the rest must still exist and be allowed.
    const found = projectIds.length > 0 ? await this.work.projects.getMany(projectIds) : [];
    projectIds = projectIds.filter((_id, index) => found[index] !== undefined);
    if (projectIds.length === 0) {
      throw new InvalidInputError(
        options.failedOnly
          ? `nothing to retry: no project of ${batchId} failed or was cancelled`
          : `nothing to retry: ${batchId} covers no project that still exists`,
      );
    }
    return this.work.createBatch(source.pluginId, projectIds, actor, { retryOf: batchId });
  }

  /** What changed from batch `fromId` to batch `toId`. */
  async diff(fromId: string, toId: string): Promise<BatchDiff> {
    const [from, to] = await Promise.all([this.#side(fromId), this.#side(toId)]);
    return diffBatches(from, to);
  }

  /** The newest batch of the same plugin created before this one (undefined: none is kept). */
  async previous(batchId: string): Promise<BatchView | undefined> {
    return this.work.batches.previous(await this.work.getBatch(batchId));
  }

  /** The export's text, chunk by chunk (projects in queue order; pending ones too). */
  async export(batchId: string, format: ExportFormat): Promise<AsyncGenerator<string>> {
    await this.work.getBatch(batchId); // unknown batch: an error now, before any output
    const chunks = this.work.batches.outcomeChunks(batchId);
    async function* rows(): AsyncGenerator<ExportRow[]> {
      for await (const chunk of chunks)
        yield chunk.map(([projectId, outcome]) =>
          outcome === 'pending' ? { projectId, status: 'pending' as const } : outcome,
        );
    }
    return exportBatch(batchId, format, rows());
  }

  async #side(batchId: string): Promise<DiffSide> {
    await this.work.getBatch(batchId);
    const outcomes: DiffSide['outcomes'] = new Map();
    for await (const chunk of this.work.batches.outcomeChunks(batchId))
      for (const [projectId, outcome] of chunk) outcomes.set(projectId, outcome);
    return { batchId, outcomes };
  }

  async #audit(actor: string, batchId: string, detail: Record<string, unknown>): Promise<void> {
    await appendAudit(this.work.redis, this.work.keys, {
      actor,
      action: 'batch.cancel',
      target: batchId,
      detail,
    });
  }
}
