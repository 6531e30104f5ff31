// The one batch follower, for the api's Server-Sent Events and for the CLI's
// `inspect --wait` / `batch show --watch` (BatchService.follow). It listens on
// the pub/sub channel that recording a project's outcome publishes on, over
// the process's shared subscriber (event-hub.ts), and reads the batch without
// its results: the published counts change the view, a re-read happens only
// when the subscriber came back after a drop or nothing was heard for a while.
// Only the finished batch is read with its results (unless asked not to). An
// aborted signal ends the follow at once.
import { FALLBACK_READ_MS, type EventHub } from '../../redis/index.js';
import { sleepUntilWoken } from '../../platform/index.js';
import {
  isBatchOver,
  type BatchProgress,
  type BatchStore,
  type BatchView,
  type ProjectOutcome,
} from './batch-store.js';

/** Stored outcomes read at once for onOutcomeTexts. */
const OUTCOME_TEXTS_AT_ONCE = 4;
/** Outcomes handed to onOutcomeTexts in one call stop at about this many characters (a larger one goes alone). */
const OUTCOME_TEXT_BYTES = 256 * 1024;

export interface BatchFollowOptions {
  signal?: AbortSignal;
  /** The safety re-read's interval (default FALLBACK_READ_MS). */
  fallbackReadMs?: number;
  /** Each project's outcome as soon as it is recorded (the web UI's rows while the batch runs). */
  onOutcomes?: (outcomes: ProjectOutcome[]) => void;
  /**
   * The same outcomes as stored (JSON text, unparsed), a few at a time and at
   * most OUTCOME_TEXT_BYTES a call (a larger outcome alone): the api's event
   * stream sends these, and the follow waits for it before reading more.
   */
  onOutcomeTexts?: (texts: string[]) => void | Promise<void>;
  /** Whether the finished batch is read with its results (default true; an event stream needs only the counts). */
  results?: boolean;
}

export interface BatchFollowSource {
  store: BatchStore;
  events: EventHub;
  /** The batch (NotFoundError when unknown), with or without its results. */
  get(batchId: string, options: { results: boolean }): Promise<BatchView>;
}

/**
 * Calls onChange with the batch (without results) whenever its counts or state
 * change, the first time at once; resolves with the finished batch (with its
 * results), or with the latest view (without them) when the signal aborted first.
 */
export async function followBatch(
  source: BatchFollowSource,
  batchId: string,
  onChange: (view: BatchView) => void,
  options: BatchFollowOptions = {},
): Promise<BatchView> {
  let latest: BatchProgress | undefined;
  let recorded: string[] = [];
  let resync = false;
  let wake = () => {};
  const listener = {
    onMessage: (message: string) => {
      const progress = source.store.parseProgress(batchId, message);
      // A message of another form says only that something changed: read the batch again.
      if (!progress) resync = true;
      else {
        latest = progress;
        if (options.onOutcomes || options.onOutcomeTexts)
          recorded.push(...(progress.projectIds ?? [progress.projectId]));
      }
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
    if (options.onOutcomes) options.onOutcomes(await source.store.outcomesOf(batchId, ids));
    // A result may be a MiB: a few at a time, so no follower holds a whole burst of them.
    if (options.onOutcomeTexts)
      for (let start = 0; start < ids.length; start += OUTCOME_TEXTS_AT_ONCE) {
        const texts = await source.store.outcomeTexts(
          batchId,
          ids.slice(start, start + OUTCOME_TEXTS_AT_ONCE),
        );
        let group: string[] = [];
        let bytes = 0;
        for (const text of texts) {
          if (text === null) continue;
          if (group.length > 0 && bytes + text.length > OUTCOME_TEXT_BYTES) {
            await options.onOutcomeTexts(group);
            group = [];
            bytes = 0;
          }
          group.push(text);
          bytes += text.length;
        }
        if (group.length > 0) await options.onOutcomeTexts(group);
      }
  };
  const read = () => source.get(batchId, { results: false });
  // Subscribe before the first read, so no outcome falls between the two.
  const unsubscribe = await source.events.subscribe(source.store.eventsChannel(batchId), listener);
  try {
    let view = await read();
    let shown = '';
    for (;;) {
      await sendOutcomes();
      const key = `${view.succeeded}/${view.failed}/${view.cancelled}/${view.state}`;
      if (key !== shown) onChange(view);
      shown = key;
      if (isBatchOver(view))
        return options.results === false ? view : await source.get(batchId, { results: true });
      if (!latest && !resync)
        await sleepUntilWoken(
          options.fallbackReadMs ?? FALLBACK_READ_MS,
          options.signal,
          (resolve) => (wake = resolve),
        );
      if (options.signal?.aborted) return view;
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
