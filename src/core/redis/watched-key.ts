// Read-modify-write of state under one Redis key, atomic with whatever else the
// same MULTI writes (audit entries): WATCH on a connection of its own, the
// read, the MULTI; run again when another writer changed the key meanwhile.
// One at a time per instance (WATCH is per connection).
import type { ChainableCommander, Redis } from 'ioredis';
import { closeRedis, duplicateRedis } from './connections.js';

export interface Transaction<T> {
  /** The writes, or undefined to write nothing. */
  multi?: ChainableCommander;
  value: T;
}

export class WatchedKey {
  #tx: Redis | undefined;
  #queue: Promise<unknown> = Promise.resolve();

  constructor(
    readonly redis: Redis,
    readonly key: string,
    /** Names what is updated in the error when writers keep racing. */
    readonly what: string,
  ) {}

  /** `body` reads through `tx` (and builds `tx.multi()`); it may run more than once. */
  transact<T>(body: (tx: Redis) => Promise<Transaction<T>>): Promise<T> {
    const run = this.#queue.then(() => this.#run(body));
    this.#queue = run.catch(() => {});
    return run;
  }

  async close(): Promise<void> {
    if (this.#tx) await closeRedis(this.#tx);
    this.#tx = undefined;
  }

  async #run<T>(body: (tx: Redis) => Promise<Transaction<T>>): Promise<T> {
    this.#tx ??= duplicateRedis(this.redis);
    const tx = this.#tx;
    for (let attempt = 0; attempt < 50; attempt += 1) {
      await tx.watch(this.key);
      let outcome: Transaction<T>;
      try {
        outcome = await body(tx);
      } catch (error) {
        await tx.unwatch();
        throw error;
      }
      if (!outcome.multi) {
        await tx.unwatch();
        return outcome.value;
      }
      if ((await outcome.multi.exec()) !== null) return outcome.value;
    }
    throw new Error(`could not update ${this.what}: too many concurrent writers`);
  }
}
