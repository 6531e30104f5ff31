// @ts-check
// Live updates, one way for every page: follow an event stream while the api
// gives one, and read again every few seconds while it does not (or for what
// has no stream). Each loop ends when its page is left (`signal`).
import { stream } from './api.js';

/**
 * Waits `ms`, or less when `signal` aborts first.
 *
 * @param {number} ms
 * @param {AbortSignal} signal
 * @returns {Promise<void>}
 */
export function pause(ms, signal) {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });
}

/**
 * Calls `read()` now and then every `everyMs` until it answers true (over)
 * or `signal` aborts. A failed read is handed to `onError` (a 401 ends the
 * loop: the session is over) and read again at the next turn.
 *
 * @param {number} everyMs
 * @param {AbortSignal} signal
 * @param {() => Promise<boolean>} read
 * @param {(error: any) => void} [onError]
 */
export async function every(everyMs, signal, read, onError = () => {}) {
  while (!signal.aborted) {
    try {
      if (await read()) return;
    } catch (error) {
      if (signal.aborted || /** @type {{ signedOut?: boolean }} */ (error)?.signedOut) return;
      onError(error);
    }
    await pause(everyMs, signal);
  }
}

/**
 * Follows `${path}/events` (each event to `onEvent(name, data)`) until it ends
 * with `done`; if the stream cannot be had or ends early (and `over()` does not
 * say it is over), `read()` every `everyMs` instead until it answers true.
 * `onMode('stream' | 'poll', error?)` says which one is live. Resolves true
 * when followed to the end, false when the page was left or the session ended.
 *
 * @param {{
 *   path: string,
 *   signal: AbortSignal,
 *   everyMs: number,
 *   onEvent: (name: string, data: any) => void,
 *   read: () => Promise<boolean>,
 *   over?: () => boolean,
 *   onMode?: (mode: 'stream' | 'poll', error?: Error) => void,
 * }} options
 * @returns {Promise<boolean>}
 */
export async function follow({
  path,
  signal,
  everyMs,
  onEvent,
  read,
  over = () => false,
  onMode = () => {},
}) {
  let finished = false;
  /** @type {Error | undefined} */
  let failed;
  onMode('stream');
  try {
    await stream(
      `${path}/events`,
      (name, data) => {
        if (name === 'done') finished = true;
        onEvent(name, data);
      },
      signal,
    );
  } catch (error) {
    if (signal.aborted || /** @type {{ signedOut?: boolean }} */ (error)?.signedOut) return false;
    failed = /** @type {Error} */ (error);
  }
  if (signal.aborted) return false;
  if (finished || over()) return true;
  onMode('poll', failed);
  await every(everyMs, signal, read);
  return !signal.aborted;
}
