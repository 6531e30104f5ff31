// Following a log as it grows (`plugin logs --follow`, `op logs --follow`):
// read the newest entries again and again, print those after the last one
// printed (entries carry unique ids), until told to stop or the source ends.
import type { LogEntry } from './plugin-store.js';
import { sleep } from '../platform/index.js';

export interface FollowOptions {
  signal?: AbortSignal | undefined;
  pollMs?: number;
  /** Checked before each read: once it holds, one last read is printed and the follow ends. */
  ended?: () => Promise<boolean>;
}

/** `read` returns entries oldest first; `print` gets each batch of new ones. */
export async function followEntries(
  read: () => Promise<LogEntry[]>,
  print: (entries: LogEntry[]) => void,
  options: FollowOptions = {},
): Promise<void> {
  let lastKey: string | undefined;
  while (!options.signal?.aborted) {
    const done = (await options.ended?.()) ?? false;
    const entries = await read();
    const seen = lastKey === undefined ? -1 : entries.findIndex((entry) => keyOf(entry) === lastKey);
    // Not found: everything since was trimmed away or it is the first read; print what there is.
    const fresh = entries.slice(seen + 1);
    if (fresh.length > 0) {
      print(fresh);
      lastKey = keyOf(fresh.at(-1)!);
    }
    if (done) return;
    await sleep(options.pollMs ?? 500, options.signal);
  }
}

/** Entries written before ids were given are told apart by their content. */
function keyOf(entry: LogEntry): string {
  return entry.id ?? JSON.stringify(entry);
}
