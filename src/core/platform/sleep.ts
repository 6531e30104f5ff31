/** Resolves after `ms`, or as soon as `signal` aborts (never rejects). */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}

/**
 * Like sleep, and also ends as soon as the wake function handed to `register`
 * is called (a follower's pub/sub message arrived). No timer outlives it.
 */
export function sleepUntilWoken(
  ms: number,
  signal: AbortSignal | undefined,
  register: (wake: () => void) => void,
): Promise<void> {
  const woken = new AbortController();
  const forward = () => woken.abort();
  if (signal?.aborted) return Promise.resolve();
  signal?.addEventListener('abort', forward, { once: true });
  register(forward);
  return sleep(ms, woken.signal).finally(() => signal?.removeEventListener('abort', forward));
}
