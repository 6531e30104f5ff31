// Remote waits without polling: the api's Server-Sent Events routes
// (`/batches/:id/events`, `/operations/:id/events`) read until their `done`
// event. A stream that drops first (the api restarted, an idle connection
// timed out) is opened again; each route's first event is the state as it is
// then, so what is printed is never stale. While the api refuses another
// stream (429: the token holds as many open as it may), a GET now and then
// stands in, so the wait still ends when the work does.
import { readEnv, sleep } from '../core/platform/index.js';
import {
  ApiMisbehavingError,
  ApiUnreachableError,
  EventTooLargeError,
  RemoteProblemError,
} from './cli-errors.js';
import type { ApiClient } from './http.js';

export interface ServerEvent {
  event: string;
  data: string;
}

/**
 * While the api cannot be reached (or answers what is no event stream), it is
 * tried again this long before the wait gives up (exit 2).
 * SWITCHYARD_WAIT_GIVE_UP_MS shortens it for tests.
 */
const GIVE_UP_AFTER_MS = 60_000;
const RETRY_MS = { first: 250, max: 5_000 };
const READ_WHEN_REFUSED_MS = 1_000;

/**
 * The most text one event may hold (its unfinished line, or its data lines
 * together), in characters. Every event the api sends is one JSON line (a
 * finished batch's `done` carries its results); this is far above that, and
 * stops a broken or hostile server from filling the CLI's memory with a line
 * or an event that never ends.
 */
export const MAX_EVENT_CHARS = 8 * 1024 * 1024;

function giveUpAfterMs(): number {
  const fromEnv = Number(readEnv('SWITCHYARD_WAIT_GIVE_UP_MS'));
  return Number.isInteger(fromEnv) && fromEnv > 0 ? fromEnv : GIVE_UP_AFTER_MS;
}

/**
 * Streams `path` and hands each event but `done` to `onEvent`; resolves with
 * `done`'s data, or undefined once `signal` aborted. Refusals (401, 403, 404,
 * …) fail as `request` fails. `read` is one GET of the same thing: its final
 * state once it is over (else undefined), used while streams are refused.
 */
export async function untilDone(
  api: ApiClient,
  path: string,
  onEvent: (event: ServerEvent) => void,
  options: { signal?: AbortSignal; read: () => Promise<unknown> },
): Promise<unknown> {
  let unreachableSince: number | undefined;
  let pause = RETRY_MS.first;
  while (!options.signal?.aborted) {
    try {
      const body = await api.stream(path, {
        accept: 'text/event-stream',
        contentType: /^text\/event-stream\b/i,
        ...(options.signal ? { signal: options.signal } : {}),
      });
      for await (const event of serverEvents(body, { url: api.url })) {
        // Only a stream that carries events resets the backoff: a server that
        // answers and then sends nothing must not be asked again every 250 ms.
        unreachableSince = undefined;
        pause = RETRY_MS.first;
        if (event.event === 'done') return JSON.parse(event.data) as unknown;
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
      if (!(error instanceof ApiUnreachableError)) throw error;
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
 * The events of a text/event-stream body (the WHATWG format; comments, `id`
 * and `retry` ignored). Each chunk is scanned once; an unfinished line or an
 * event's data past `maxChars` fails with ApiUnreachableError naming `url`.
 */
export async function* serverEvents(
  chunks: AsyncIterable<string>,
  options: { url?: string; maxChars?: number } = {},
): AsyncGenerator<ServerEvent> {
  const maxChars = options.maxChars ?? MAX_EVENT_CHARS;
  const tooLarge = (what: string) =>
    new EventTooLargeError(
      `the API${options.url ? ` at ${options.url}` : ''} sent ${what} longer than ${maxChars} characters; stopped reading it (a broken server or proxy?)`,
    );
  // Its own: lastIndex is state, and generators interleave.
  const lineBreak = /[\r\n]/g;
  let pending = '';
  // The previous chunk ended in \r: a \n opening this one is the rest of that line break.
  let afterCr = false;
  let event = '';
  let data: string[] = [];
  let dataChars = 0;
  for await (const chunk of chunks) {
    if (chunk === '') continue;
    let start = afterCr && chunk.startsWith('\n') ? 1 : 0;
    afterCr = false;
    lineBreak.lastIndex = start;
    for (let end = lineBreak.exec(chunk); end; end = lineBreak.exec(chunk)) {
      const line = pending + chunk.slice(start, end.index);
      pending = '';
      start = end.index + 1;
      if (end[0] === '\r') {
        if (start === chunk.length) afterCr = true;
        else if (chunk[start] === '\n') start++;
      }
      lineBreak.lastIndex = start;
      if (line.length > maxChars) throw tooLarge('a line');
      if (line === '') {
        // A blank line dispatches the event gathered so far (none without data).
        if (data.length > 0) yield { event: event || 'message', data: data.join('\n') };
        event = '';
        data = [];
        dataChars = 0;
        continue;
      }
      if (line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon === -1 ? line : line.slice(0, colon);
      let value = colon === -1 ? '' : line.slice(colon + 1);
      if (value.startsWith(' ')) value = value.slice(1);
      if (field === 'event') event = value;
      else if (field === 'data') {
        dataChars += value.length + 1;
        if (dataChars > maxChars) throw tooLarge('an event');
        data.push(value);
      }
    }
    pending += chunk.slice(start);
    if (pending.length > maxChars) throw tooLarge('a line');
  }
}
