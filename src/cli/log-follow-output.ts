// `plugin logs --follow` and `op logs --follow` over either backend: the core's
// followEntries over the backend's own reads (Redis locally, the HTTP API
// remotely), so both modes print the same entries the same way.
import { followEntries } from '../core/plugins/index.js';
import { isTerminal } from '../core/work/operations/index.js';
import type { LogEntry } from '../core/plugins/index.js';

/** A follower rereads this many newest entries (a batch of one call's stderr is at most ~200 lines). */
const FOLLOW_READ = 250;

export interface LogFollowOptions {
  signal?: AbortSignal;
  pollMs?: number;
}

/**
 * Prints the newest `limit` entries, then every new one as calls write them,
 * until `signal` aborts. `logs` answers newest first, as `plugin logs` does.
 */
export async function followPluginLogs(
  logs: (id: string, limit: number) => Promise<LogEntry[]>,
  id: string,
  print: (entries: LogEntry[]) => void,
  options: LogFollowOptions & { limit?: number } = {},
): Promise<void> {
  // Read before following: an unknown plugin fails now, before anything is printed.
  let first: LogEntry[] | undefined = await logs(id, options.limit ?? 100);
  const read = async () => {
    const newest = first ?? (await logs(id, FOLLOW_READ));
    first = undefined;
    return [...newest].reverse();
  };
  await followEntries(read, print, {
    signal: options.signal,
    ...(options.pollMs ? { pollMs: options.pollMs } : {}),
  });
}

/** Prints the operation's stderr as its call writes it; ends when the operation has ended. */
export async function followOperationLogs(
  reads: {
    getOperation(id: string): Promise<{ state: string }>;
    operationLogs(id: string): Promise<LogEntry[]>;
  },
  id: string,
  print: (entries: LogEntry[]) => void,
  options: LogFollowOptions = {},
): Promise<void> {
  await reads.getOperation(id);
  await followEntries(() => reads.operationLogs(id), print, {
    ...options,
    ended: async () => isTerminal((await reads.getOperation(id)).state),
  });
}
