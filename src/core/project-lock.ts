// One operation at a time per project, across all workers: a Redis lock with
// an expiry and a fencing token, owned by one object from acquire to release
// (as BullMQ's LockManager owns job locks). While held it renews itself; if a
// renewal finds the lock gone, `onLost` fires so the holder stops its call.
import type { Redis } from 'ioredis';
import type { Keys } from './keys.js';
import { scriptsOn } from './scripts.js';

export interface ProjectLockOptions {
  /** Expiry of the lock; renewed every third of it (at least every second). */
  ttlMs: number;
  /** Called once when a renewal finds the lock taken or expired. */
  onLost?: () => void;
}

export class ProjectLock {
  #timer: NodeJS.Timeout | undefined;
  #released = false;

  private constructor(
    private readonly redis: Redis,
    private readonly key: string,
    /** `<operation id>:<fencing token>`: what the dispatch mark checks. */
    readonly token: string,
    private readonly options: ProjectLockOptions,
  ) {}

  /** Takes the project's lock for `operationId` and starts renewing it; undefined when another operation holds it. */
  static async acquire(
    redis: Redis,
    keys: Keys,
    projectId: string,
    operationId: string,
    options: ProjectLockOptions,
  ): Promise<ProjectLock | undefined> {
    const key = keys.projectLock(projectId);
    const token = await scriptsOn(redis).lockAcquire([key, keys.fencing], operationId, options.ttlMs);
    if (!token) return undefined;
    const lock = new ProjectLock(redis, key, token, options);
    lock.#startRenewing();
    return lock;
  }

  /** Releases the lock `operationId` holds whatever its token (one left by a dead worker). */
  static async releaseHeldBy(
    redis: Redis,
    keys: Keys,
    projectId: string,
    operationId: string,
  ): Promise<void> {
    await scriptsOn(redis).lockReleaseOf([keys.projectLock(projectId)], operationId);
  }

  /** Stops renewing and releases the lock if it still holds this token. Idempotent. */
  async release(): Promise<void> {
    if (this.#released) return;
    this.#released = true;
    clearInterval(this.#timer);
    await scriptsOn(this.redis).lockRelease([this.key], this.token);
  }

  #startRenewing(): void {
    this.#timer = setInterval(
      () => {
        void scriptsOn(this.redis)
          .lockRenew([this.key], this.token, this.options.ttlMs)
          .then((held) => {
            if (held !== 1 && !this.#released) this.options.onLost?.();
          })
          .catch(() => {});
      },
      Math.max(1_000, Math.floor(this.options.ttlMs / 3)),
    );
  }
}
