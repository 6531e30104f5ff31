// Follows one operation's state through the pub/sub channel its transition and
// cancel scripts publish on (keys.operationEvents), for the api's Server-Sent
// Events and for OperationService.wait, over the process's shared subscriber
// (event-hub.ts). No steady polling: the record is read again when a message
// arrives, and at once when the subscriber comes back after a drop (pub/sub
// keeps nothing for the absent); a slow re-read covers anything else.
import { FALLBACK_READ_MS, type EventHub } from '../../redis/index.js';
import { sleepUntilWoken } from '../../platform/index.js';
import { isTerminal, type OperationStore, type OperationView } from './operation-store.js';

export interface OperationFollowOptions {
  signal?: AbortSignal | undefined;
  /** The safety re-read's interval (default 5 s). */
  fallbackReadMs?: number | undefined;
}

export interface OperationFollowSource {
  store: OperationStore;
  events: EventHub;
  /** The operation's view; NotFoundError when unknown. */
  get(id: string): Promise<OperationView>;
}

/**
 * Calls onState with the operation whenever its state changes, the first time
 * at once; resolves with the terminal view, or with the latest one when the
 * signal aborted first. NotFoundError when the operation is unknown (or was
 * deleted meanwhile).
 */
export async function followOperation(
  source: OperationFollowSource,
  id: string,
  onState: (operation: OperationView) => void,
  options: OperationFollowOptions = {},
): Promise<OperationView> {
  let changed = false;
  let wake = () => {};
  const changedNow = () => {
    changed = true;
    wake();
  };
  // Subscribe before the first read, so no state falls between the two.
  const unsubscribe = await source.events.subscribe(source.store.eventsChannel(id), {
    onMessage: changedNow,
    onResync: changedNow,
  });
  try {
    let shown = '';
    for (;;) {
      changed = false;
      const operation = await source.get(id);
      if (operation.state !== shown) onState(operation);
      shown = operation.state;
      if (isTerminal(operation.state) || options.signal?.aborted) return operation;
      // A message that came during the read: read again at once.
      if (!changed)
        await sleepUntilWoken(
          options.fallbackReadMs ?? FALLBACK_READ_MS,
          options.signal,
          (resolve) => (wake = resolve),
        );
    }
  } finally {
    unsubscribe();
  }
}
