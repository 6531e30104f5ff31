// Remote waits without polling: the api's Server-Sent Events routes
// (`/batches/:id/events`, `/operations/:id/events`) read until their `done`
// event. A stream that drops first (the api restarted, an idle connection
// timed out) is opened again; each route's first event is the state as it is
// then, so what is printed is never stale. While the api refuses another
// stream (429: the token holds as many open as it may), a GET now and then
// stands in, so the wait still ends when the work does.
import { sleep } from '../core/sleep.js';
import { ApiUnreachableError, RemoteProblemError } from './errors.js';
import type { ApiClient } from './http.js';

export interface ServerEvent {
  event: string;
  data: string;
}

/** While the api cannot be reached, it is tried again this long before the wait gives up (exit 2). */
const GIVE_UP_AFTER_MS = 60_000;
const RETRY_MS = { first: 250, max: 5_000 };
const READ_WHEN_REFUSED_MS = 1_000;

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
        ...(options.signal ? { signal: options.signal } : {}),
      });
      unreachableSince = undefined;
      pause = RETRY_MS.first;
      for await (const event of serverEvents(body)) {
        if (event.event === 'done') return JSON.parse(event.data) as unknown;
        onEvent(event);
      }
      // Ended without `done`: the api went away mid-stream (or aborted: the loop ends).
    } catch (error) {
      if (options.signal?.aborted) break;
      if (error instanceof RemoteProblemError && error.status === 429) {
        const over = await options.read();
        if (over !== undefined) return over;
        await sleep(READ_WHEN_REFUSED_MS, options.signal);
        continue;
      }
      if (!(error instanceof ApiUnreachableError)) throw error;
      unreachableSince ??= Date.now();
      if (Date.now() - unreachableSince > GIVE_UP_AFTER_MS) throw error;
    }
    await sleep(pause, options.signal);
    pause = Math.min(pause * 2, RETRY_MS.max);
  }
  return undefined;
}

/** The events of a text/event-stream body (the WHATWG format; comments, `id` and `retry` ignored). */
export async function* serverEvents(chunks: AsyncIterable<string>): AsyncGenerator<ServerEvent> {
  let buffer = '';
  let event = '';
  let data: string[] = [];
  for await (const chunk of chunks) {
    buffer += chunk;
    for (;;) {
      const end = /\r\n|\r|\n/.exec(buffer);
      // A trailing \r may be the first half of \r\n: wait for the next chunk.
      if (!end || (end[0] === '\r' && end.index === buffer.length - 1)) break;
      const line = buffer.slice(0, end.index);
      buffer = buffer.slice(end.index + end[0].length);
      if (line === '') {
        // A blank line dispatches the event gathered so far (none without data).
        if (data.length > 0) yield { event: event || 'message', data: data.join('\n') };
        event = '';
        data = [];
        continue;
      }
      if (line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon === -1 ? line : line.slice(0, colon);
      let value = colon === -1 ? '' : line.slice(colon + 1);
      if (value.startsWith(' ')) value = value.slice(1);
      if (field === 'event') event = value;
      else if (field === 'data') data.push(value);
    }
  }
}
