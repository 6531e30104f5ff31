// What a batch job's calls are checked against, read once per job instead of
// once per call: the plugin's record, the job's projects (PROTOCOL §9.1) and
// whether the batch was cancelled. Every change of those moves the call-state
// token in the same MULTI (redis/call-state.ts), so before each call one GET
// of the token tells whether the read is still current; when it moved, all of
// it is read again (a job's first call sends the GET with the reads). The
// token is read before the state it vouches for: a change that falls between
// the two costs one more read, never a stale one. The same round trip reads
// the fair queue's contention generation (fair-queue.ts): a job running a
// large slice learns that another batch now waits without another command.
import type { Redis } from 'ioredis';
import type { BatchStore } from './batch-store.js';
import type { InspectionState, PluginService } from '../../plugins/index.js';
import type { Keys } from '../../redis/index.js';

export interface CurrentCallState {
  cancelled: boolean;
  state: InspectionState;
  /** The fair queue's contention generation now ('0' before any contention). */
  generation: string;
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
    if (!this.#current && this.plugins.sharesConnection(this.batches.redis)) {
      // A job's first call: the token and the state in one round trip. Sent in that order on one
      // connection, Redis runs them in that order, so the token is still read before the state.
      const [[token, generation], read] = await Promise.all([
        readTokens(this.batches.redis, this.batches.keys),
        this.#read(),
      ]);
      return this.#keep(token, generation, read);
    }
    const [token, generation] = await readTokens(this.batches.redis, this.batches.keys);
    if (this.#current && token === this.#token) return { ...this.#current, generation };
    return this.#keep(token, generation, await this.#read());
  }

  /** Everything a token vouches for, read at once. */
  #read(): Promise<[boolean, InspectionState]> {
    return Promise.all([
      this.batches.isCancelled(this.batchId),
      this.plugins.readInspectionState(this.pluginId, this.projectIds),
    ]);
  }

  #keep(token: string, generation: string, [cancelled, state]: [boolean, InspectionState]): CurrentCallState {
    this.#token = token;
    this.#current = { cancelled, state, generation };
    return this.#current;
  }
}

/** The call-state token (redis/call-state.ts) and the contention generation, in one MGET. */
async function readTokens(redis: Redis, keys: Keys): Promise<[string, string]> {
  const [token, generation] = await redis.mget(keys.callState, keys.fairGeneration);
  return [token ?? '', generation ?? '0'];
}
