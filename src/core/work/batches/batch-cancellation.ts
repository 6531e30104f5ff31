// The inspection calls a worker process runs, by batch, so `batch cancel`
// (heard over pub/sub on keys.batchCancel) can kill exactly those: each call
// gets a signal that aborts on the worker's own shutdown or on its batch's
// cancellation; the supervisor then kills the process group and descendants.
import { abortReasonOf } from '../../platform/index.js';

/** Why a call's signal was aborted by `batch cancel` (beside the shell's ABORT_REASONS). */
export const BATCH_CANCELLED = 'batch-cancelled';

export class RunningInspections {
  readonly #byBatch = new Map<string, Set<AbortController>>();

  /** A signal for one call of this batch; release() when the call ended. */
  track(batchId: string, outer?: AbortSignal): { signal: AbortSignal; release: () => void } {
    const controller = new AbortController();
    const onOuter = () => controller.abort(outer?.reason);
    if (outer?.aborted) onOuter();
    else outer?.addEventListener('abort', onOuter, { once: true });
    let set = this.#byBatch.get(batchId);
    if (!set) this.#byBatch.set(batchId, (set = new Set()));
    set.add(controller);
    return {
      signal: controller.signal,
      release: () => {
        outer?.removeEventListener('abort', onOuter);
        set.delete(controller);
        if (set.size === 0) this.#byBatch.delete(batchId);
      },
    };
  }

  /** Aborts every call of the batch running here; how many. */
  cancel(batchId: string): number {
    const set = this.#byBatch.get(batchId);
    for (const controller of set ?? []) controller.abort(BATCH_CANCELLED);
    return set?.size ?? 0;
  }
}

export function isBatchCancellation(signal: AbortSignal | undefined): boolean {
  return abortReasonOf(signal) === BATCH_CANCELLED;
}
