// Remote waits without polling: the api's Server-Sent Events routes
// (`/batches/:id/events`, `/operations/:id/events`) read until their `done`
// event. A stream that drops first (the api restarted, an idle connection
// timed out) is opened again; each route's first event is the state as it is
// then, so what is printed is never stale. While the api refuses another
// stream (429: the token holds as many open as it may), a GET now and then
// stands in, so the wait still ends when the work does.
import { serverEvents as readServerEvents, type ServerEvent } from '../core/contract/index.js';
import { readEnv, sleep } from '../core/platform/index.js';
import {
  ApiMisbehavingError,
  ApiUnreachableError,
  EventTooLargeError,
  MalformedAnswerError,
  RemoteProblemError,
} from './cli-errors.js';
import type { Transport } from './transport.js';

export { MAX_EVENT_CHARS, type ServerEvent } from '../core/contract/index.js';

/**
 * While the api cannot be reached (or answers what is no event stream), it is
 * tried again this long before the wait gives up (exit 2).
 * SWITCHYARD_WAIT_GIVE_UP_MS shortens it for tests.
 */
const GIVE_UP_AFTER_MS = 60_000;
const RETRY_MS = { first: 250, max: 5_000 };
const READ_WHEN_REFUSED_MS = 1_000;

function giveUpAfterMs(): number {
  const fromEnv = Number(readEnv('SWITCHYARD_WAIT_GIVE_UP_MS'));
  return Number.isInteger(fromEnv) && fromEnv > 0 ? fromEnv : GIVE_UP_AFTER_MS;
}

/**
 * Streams `path` and hands each event but `done` to `onEvent`; resolves with
 * `done`'s data as `options.done` reads it, or undefined once `signal`
 * aborted. Refusals (401, 403, 404, …) fail as `request` fails. `read` is
 * one GET of the same thing: its final state once it is over (else
 * undefined), used while streams are refused.
 */
export async function untilDone<T>(
  api: Transport,
  path: string,
  onEvent: (event: ServerEvent) => void,
  options: {
    signal?: AbortSignal | undefined;
    read: () => Promise<T | undefined>;
    done: (data: string) => T;
  },
): Promise<T | undefined> {
  let unreachableSince: number | undefined;
  let pause = RETRY_MS.first;
  while (!options.signal?.aborted) {
    try {
      const body = await api.stream(path, {
        accept: 'text/event-stream',
        contentType: /^text\/event-stream\b/i,
        signal: options.signal,
      });
      for await (const event of serverEvents(body, { url: api.url })) {
        // Only a stream that carries events resets the backoff: a server that
        // answers and then sends nothing must not be asked again every 250 ms.
        unreachableSince = undefined;
        pause = RETRY_MS.first;
        if (event.event === 'done') return options.done(event.data);
        onEvent(event);
      }
      // Ended without `done`: the api went away mid-stream (or aborted: the loop ends).
      if (options.signal?.aborted) break;
      unreachableSince ??= Date.now();
      if (Date.now() - unreachableSince > giveUpAfterMs())
        throw new ApiMisbehavingError(
          `the API at ${api.url} keeps ending the event stream of ${path} without an event; run the command again later`,
        );
    } catch (error) {
      if (options.signal?.aborted) break;
      if (error instanceof RemoteProblemError && error.status === 429) {
        const over = await options.read();
        if (over !== undefined) return over;
        await sleep(READ_WHEN_REFUSED_MS, options.signal);
        continue;
      }
      // A malformed answer would be malformed again: said at once, not after the give-up.
      if (error instanceof MalformedAnswerError || !(error instanceof ApiUnreachableError)) throw error;
      // A finished batch's `done` carries every result and can outgrow the
      // bound: its final state then comes from a GET (a hostile server that
      // only sends oversized events still runs into the give-up below).
      if (error instanceof EventTooLargeError) {
        const over = await options.read();
        if (over !== undefined) return over;
      }
      unreachableSince ??= Date.now();
      if (Date.now() - unreachableSince > giveUpAfterMs()) throw error;
    }
    await sleep(pause, options.signal);
    pause = Math.min(pause * 2, RETRY_MS.max);
  }
  return undefined;
}

/**
 * The events of a text/event-stream body (the contract's one reader); an
 * unfinished line or an event's data past `maxChars` fails with
 * EventTooLargeError (an ApiUnreachableError) naming `url`.
 */
export function serverEvents(
  chunks: AsyncIterable<string>,
  options: { url?: string; maxChars?: number } = {},
): AsyncGenerator<ServerEvent> {
  return readServerEvents(chunks, {
    ...(options.maxChars !== undefined ? { maxChars: options.maxChars } : {}),
    tooLarge: (maxChars) =>
      new EventTooLargeError(
        `the API${options.url ? ` at ${options.url}` : ''} sent an event longer than ${maxChars} characters; stopped reading it (a broken server or proxy?)`,
      ),
  });
}
