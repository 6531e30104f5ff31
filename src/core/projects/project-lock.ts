// One operation at a time per project, across all workers: a Redis lock with
// an expiry and a fencing token, owned by one object from acquire to release
// (as BullMQ's LockManager owns job locks). While held it renews itself; if a
// renewal finds the lock gone, or no renewal succeeded for so long that the
// lock is about to lapse (Redis unreachable: another worker could take the
// project), `onLost` fires so the holder stops its call in time.
// The lock is named after the project's real root, not its id, so hosts that
// share a directory at one path share its lock; ProjectService.lockNameOf
// picks one root for ids registered over one directory through different
// paths (older data may hold such twins: a symlink, a bind mount), so they
// can never run operations on it at once.
import { createHash } from 'node:crypto';
import { realpath } from 'node:fs/promises';
import type { Redis } from 'ioredis';
import type { Keys } from '../redis/index.js';
import { scriptsOn } from '../redis/index.js';

export interface ProjectLockOptions {
  /** Expiry of the lock; renewed every third of it. */
  ttlMs: number;
  /** Called once when a renewal finds the lock taken or expired, or it is about to lapse unrenewed. */
  onLost?: () => void;
}

/**
 * How long before a lock of `durationMs` could lapse its holder gives up its
 * call: time enough to kill it, little enough not to fire between renewals.
 */
export function lapseMarginMs(durationMs: number): number {
  return Math.min(2_000, Math.max(250, Math.floor(durationMs / 5)));
}

/**
 * The name of the lock every operation on the directory `root` takes: its
 * real path (as it is now; the path as registered when it cannot be resolved).
 */
export async function projectLockName(root: string): Promise<string> {
  return lockNameOfRealPath(await realpath(root).catch(() => root));
}

/** projectLockName of a path already resolved (so one resolution names both the directory and its lock). */
export function lockNameOfRealPath(real: string): string {
  return `root:${createHash('sha256').update(real).digest('hex')}`;
}

export class ProjectLock {
  #timer: NodeJS.Timeout | undefined;
  #lapse: NodeJS.Timeout | undefined;
  #released = false;
  #lost = false;

  private constructor(
    private readonly redis: Redis,
    private readonly key: string,
    /** `<operation id>:<fencing token>`: what the dispatch mark checks. */
    readonly token: string,
    private readonly options: ProjectLockOptions,
  ) {}

  /** Takes the lock `name` (projectLockName) for `operationId` and starts renewing it; undefined when another operation holds it. */
  static async acquire(
    redis: Redis,
    keys: Keys,
    name: string,
    operationId: string,
    options: ProjectLockOptions,
  ): Promise<ProjectLock | undefined> {
    const key = keys.projectLock(name);
    const sentAt = Date.now();
    const token = await scriptsOn(redis).lockAcquire([key, keys.fencing], operationId, options.ttlMs);
    if (!token) return undefined;
    const lock = new ProjectLock(redis, key, token, options);
    lock.#startRenewing();
    lock.#validUntil(sentAt + options.ttlMs);
    return lock;
  }

  /** Releases the lock `operationId` holds whatever its token (one left by a dead worker). */
  static async releaseHeldBy(redis: Redis, keys: Keys, name: string, operationId: string): Promise<void> {
    await scriptsOn(redis).lockReleaseOf([keys.projectLock(name)], operationId);
  }

  /** Stops renewing and releases the lock if it still holds this token. Idempotent. */
  async release(): Promise<void> {
    if (this.#released) return;
    this.#released = true;
    clearInterval(this.#timer);
    clearTimeout(this.#lapse);
    await scriptsOn(this.redis).lockRelease([this.key], this.token);
  }

  #startRenewing(): void {
    this.#timer = setInterval(
      () => {
        const sentAt = Date.now();
        void scriptsOn(this.redis)
          .lockRenew([this.key], this.token, this.options.ttlMs)
          .then((held) => {
            if (held === 1) this.#validUntil(sentAt + this.options.ttlMs);
            else this.#lose();
          })
          .catch(() => {});
      },
      Math.max(200, Math.floor(this.options.ttlMs / 3)),
    );
  }

  /** The lock holds at least until `until` (a renewal sent then succeeded); give it up just before. */
  #validUntil(until: number): void {
    if (this.#released || this.#lost) return;
    clearTimeout(this.#lapse);
    const delay = Math.max(0, until - lapseMarginMs(this.options.ttlMs) - Date.now());
    this.#lapse = setTimeout(() => this.#lose(), delay);
  }

  #lose(): void {
    if (this.#released || this.#lost) return;
    this.#lost = true;
    clearTimeout(this.#lapse);
    this.options.onLost?.();
  }
}
