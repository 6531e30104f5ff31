// What a batch job's calls are checked against, read once per job instead of
// once per call: the plugin's record, the job's projects (PROTOCOL §9.1) and
// whether the batch was cancelled. Every change of those moves the call-state
// token in the same MULTI (redis/call-state.ts), so before each call one GET
// of the token tells whether the read is still current; when it moved, all of
// it is read again. The token is read before the state it vouches for: a
// change that falls between the two costs one more read, never a stale one.
import type { BatchStore } from './batch-store.js';
import type { InspectionState, PluginService } from '../../plugins/index.js';
import { readCallState } from '../../redis/index.js';

export interface CurrentCallState {
  cancelled: boolean;
  state: InspectionState;
}

export class JobCallState {
  #token: string | undefined;
  #current: CurrentCallState | undefined;

  constructor(
    private readonly plugins: PluginService,
    private readonly batches: BatchStore,
    private readonly batchId: string,
    private readonly pluginId: string,
    private readonly projectIds: string[],
  ) {}

  /** The state for a call starting now: one GET, and a full read only when something changed. */
  async current(): Promise<CurrentCallState> {
    const token = await readCallState(this.batches.redis, this.batches.keys);
    if (this.#current && token === this.#token) return this.#current;
    const [cancelled, state] = await Promise.all([
      this.batches.isCancelled(this.batchId),
      this.plugins.readInspectionState(this.pluginId, this.projectIds),
    ]);
    this.#token = token;
    this.#current = { cancelled, state };
    return this.#current;
  }
}
