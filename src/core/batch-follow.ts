// Follows one batch for a live view (the api's Server-Sent Events) through the
// pub/sub channel that recording a project's outcome publishes on — the one
// WorkService.followBatch subscribes to — over the process's shared subscriber
// (event-hub.ts). No steady polling: the view changes when a message arrives;
// when the subscriber comes back after a drop the batch is re-read at once,
// and a slow re-read covers anything else lost.
import { isBatchOver, type BatchProgress, type BatchView, type ProjectOutcome } from './batches.js';
import { NotFoundError } from './errors.js';
import { sleepUntilWoken } from './sleep.js';
import type { WorkService } from './work.js';

export const FALLBACK_READ_MS = 5_000;

export interface FollowOptions {
  signal?: AbortSignal;
  fallbackReadMs?: number;
  /** Each project's outcome as soon as it is recorded (the web UI's rows while the batch runs). */
  onOutcomes?: (outcomes: ProjectOutcome[]) => void;
}

/**
 * Calls onChange with the batch (without results) whenever its counts or state
 * change, the first time at once; resolves with the finished batch (with its
 * results), or undefined when the signal aborted first.
 */
export async function followBatchLive(
  work: WorkService,
  batchId: string,
  onChange: (view: BatchView) => void,
  options: FollowOptions = {},
): Promise<BatchView | undefined> {
  let latest: BatchProgress | undefined;
  let recorded: string[] = [];
  let resync = false;
  let wake = () => {};
  const listener = {
    onMessage: (message: string) => {
      latest = { batchId, ...(JSON.parse(message) as Omit<BatchProgress, 'batchId'>) };
      if (options.onOutcomes) recorded.push(latest.projectId);
      wake();
    },
    onResync: () => {
      resync = true;
      wake();
    },
  };
  const sendOutcomes = async () => {
    if (recorded.length === 0) return;
    const ids = recorded;
    recorded = [];
    const raw = await work.redis.hmget(work.keys.batchResults(batchId), ...ids);
    options.onOutcomes?.(raw.flatMap((value) => (value ? [JSON.parse(value) as ProjectOutcome] : [])));
  };
  const read = async () => {
    const view = await work.batches.get(batchId, { results: false });
    if (!view) throw new NotFoundError(`unknown batch ${JSON.stringify(batchId)}`);
    return view;
  };
  // Subscribe before the first read, so no outcome falls between the two.
  const unsubscribe = await work.events.subscribe(work.batches.eventsChannel(batchId), listener);
  try {
    let view = await read();
    let shown = '';
    for (;;) {
      await sendOutcomes();
      const key = `${view.succeeded}/${view.failed}/${view.cancelled}/${view.state}`;
      if (key !== shown) onChange(view);
      shown = key;
      if (isBatchOver(view)) return await work.getBatch(batchId);
      if (!latest && !resync)
        await sleepUntilWoken(
          options.fallbackReadMs ?? FALLBACK_READ_MS,
          options.signal,
          (resolve) => (wake = resolve),
        );
      if (options.signal?.aborted) return undefined;
      const progress = resync ? undefined : latest;
      latest = undefined;
      resync = false;
      // The message carries the counts; the finished record (finishedAt) is read.
      view = progress && !progress.finished ? withProgress(view, progress) : await read();
    }
  } finally {
    unsubscribe();
  }
}

function withProgress(view: BatchView, progress: BatchProgress): BatchView {
  // A message can arrive after a re-read that already counted it: never step back.
  const cancelled = progress.cancelled ?? 0;
  const done = progress.succeeded + progress.failed + cancelled;
  if (done < view.succeeded + view.failed + view.cancelled) return view;
  return {
    ...view,
    total: progress.total,
    succeeded: progress.succeeded,
    failed: progress.failed,
    cancelled,
    pending: Math.max(0, progress.total - done),
  };
}
