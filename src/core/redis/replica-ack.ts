// "Acknowledged means a replica has it" (docs/ARCHITECTURE.md "Beyond one
// machine"). With Sentinel, a primary that dies right after answering takes
// every write its replicas had not yet copied with it; the replica promoted in
// its place never saw them. So before the API answers 201 for an operation it
// asks Redis to WAIT until at least one replica holds every write made so far
// on this connection. Replication is one ordered stream, so one WAIT after the
// last write of a request (the record, its job, its audit entry) covers them
// all, whichever connection wrote them first.
//
// A Redis with no replica (the embedded one, a single server with AOF) has
// nothing to wait for: the check is skipped, durability is its AOF's.
import type { Redis } from 'ioredis';
import { ERROR_CODES, SwitchyardError } from '../platform/index.js';

export class ReplicaAckTimeoutError extends SwitchyardError {
  readonly code = ERROR_CODES.REPLICA_ACK_TIMEOUT;
  override readonly transient = true;
}

export interface ReplicaAckOptions {
  /** How long to wait for a replica (default 2 s). */
  timeoutMs?: number;
  /** How long a "this primary has N replicas" answer is reused (default 5 s). */
  topologyCacheMs?: number;
}

export interface ReplicaAck {
  /** Replicas that confirmed (0 when the primary has none), and the time it took. */
  replicas: number;
  waitedMs: number;
}

export class ReplicaAcknowledger {
  readonly #timeoutMs: number;
  readonly #cacheMs: number;
  #known: { replicas: number; at: number } | undefined;

  constructor(options: ReplicaAckOptions = {}) {
    this.#timeoutMs = options.timeoutMs ?? 2_000;
    this.#cacheMs = options.topologyCacheMs ?? 5_000;
  }

  /**
   * Resolves once one replica has every write made on `redis` so far; throws
   * ReplicaAckTimeoutError when the primary has replicas but none confirmed in
   * time (the write may still be lost in a failover: do not acknowledge it).
   */
  async confirm(redis: Redis): Promise<ReplicaAck> {
    const started = performance.now();
    if ((await this.#replicas(redis)) === 0) return { replicas: 0, waitedMs: performance.now() - started };
    const confirmed = (await redis.call('WAIT', 1, this.#timeoutMs)) as number;
    const waitedMs = performance.now() - started;
    if (confirmed < 1) {
      this.#known = undefined; // look at the topology again next time
      throw new ReplicaAckTimeoutError(
        `no Redis replica confirmed the write within ${this.#timeoutMs} ms; it was not acknowledged`,
      );
    }
    return { replicas: confirmed, waitedMs };
  }

  async #replicas(redis: Redis): Promise<number> {
    if (this.#known && Date.now() - this.#known.at < this.#cacheMs) return this.#known.replicas;
    const info = await redis.info('replication');
    const replicas = Number(/^connected_slaves:(\d+)/m.exec(info)?.[1] ?? 0);
    this.#known = { replicas, at: Date.now() };
    return replicas;
  }
}
