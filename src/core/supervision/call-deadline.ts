// A call's time limit and its caller's cancel, as one abort signal with the reason it fired for:
// whichever comes first is what the call failed of.
import { RequestAbortedError } from '@switchyard/plugin-sdk/host';

export type AbortReason = 'timeout' | 'cancelled';

export class Deadline {
  readonly #abort = new AbortController();
  readonly #timer: NodeJS.Timeout;
  readonly #cancel: AbortSignal | undefined;
  /** Why the call was aborted, once it was. */
  reason: AbortReason | undefined;

  /** Runs from now: `timeoutMs`, or `cancel` aborting, whichever comes first. */
  constructor(timeoutMs: number, cancel: AbortSignal | undefined) {
    this.#timer = setTimeout(() => this.#fire('timeout'), timeoutMs);
    this.#cancel = cancel;
    if (cancel?.aborted) this.#onCancel();
    cancel?.addEventListener('abort', this.#onCancel, { once: true });
  }

  /** Aborts the call's requests when the deadline fires. */
  get signal(): AbortSignal {
    return this.#abort.signal;
  }

  /** The time limit no longer runs (the answer came, or the call is failing anyway); a cancel still counts. */
  stopClock(): void {
    clearTimeout(this.#timer);
  }

  /** Neither the time limit nor the cancel counts any more. */
  release(): void {
    clearTimeout(this.#timer);
    this.#cancel?.removeEventListener('abort', this.#onCancel);
  }

  /** Rejects when the deadline fires; a rejection nobody awaits any more (the race was won) is not unhandled. */
  rejectOnAbort(): Promise<never> {
    const signal = this.#abort.signal;
    const aborted = new Promise<never>((_resolve, reject) => {
      const abort = () => reject(new RequestAbortedError('aborted'));
      if (signal.aborted) abort();
      else signal.addEventListener('abort', abort, { once: true });
    });
    aborted.catch(() => {});
    return aborted;
  }

  readonly #onCancel = (): void => this.#fire('cancelled');

  #fire(reason: AbortReason): void {
    this.reason ??= reason;
    this.#abort.abort();
  }
}
