// The Idempotency-Key of POST /rollouts and POST /rollouts/:id/retry, as
// POST /operations has it: the same key with the same body answers the
// rollout it already made (and creates none); with another body, 409
// IDEMPOTENCY_CONFLICT. Keys are scoped to their requester (another token's
// same key is another key). The key is held (SET NX, briefly) before the
// selection is read, so two requests racing with one key make one rollout;
// the rollout's creation writes it for its whole time in the same MULTI, and
// a request refused before that lets it go (or, if its process died, it
// expires within HOLD_SECONDS).
import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { ConflictError, IdempotencyConflictError, InvalidInputError } from '../../platform/index.js';
import type { Keys } from '../../redis/index.js';
import { newRolloutId, type HeldKey, type RolloutStore } from './rollout-store.js';

/** How long a key is held while its rollout is being created (the selection may take seconds). */
const HOLD_SECONDS = 120;
/** How long a repeated request waits for the rollout its key's first request is still creating. */
const WAIT_FOR_FIRST_MS = 10_000;

export interface IdempotentRequest {
  /** The Idempotency-Key header. */
  key: string;
  /** Who asks (a token's id, else the actor): the key's scope. */
  requester: string;
  /** What the key binds: the request's body (and, for a retry, the rollout retried). */
  body: unknown;
}

/** Makes the rollout under `id`, writing `heldKey` with it (RolloutStore.create's option). */
export type MakeRollout<T> = (id: string, heldKey: HeldKey) => Promise<T>;

export async function createOnce<T>(
  store: RolloutStore,
  keys: Keys,
  request: IdempotentRequest,
  make: MakeRollout<T>,
  existing: (id: string) => Promise<T | undefined>,
): Promise<{ rollout: T; created: boolean }> {
  checkKey(request.key);
  const hash = sha256(JSON.stringify(canonical(request.body)));
  const redisKey = keys.rolloutIdempotency(sha256(`${request.requester}\n${request.key}`));
  const deadline = Date.now() + WAIT_FOR_FIRST_MS;
  for (;;) {
    const id = newRolloutId();
    const held: HeldKey = { redisKey, value: `${id} ${hash}` };
    const holder = await store.holdKey(held, HOLD_SECONDS);
    if (holder === undefined) {
      try {
        return { rollout: await make(id, held), created: true };
      } catch (error) {
        // Refused before the rollout was written: the same request again gets the same refusal, not a wait.
        if (!(await store.get(id))) await store.releaseKey(held);
        throw error;
      }
    }
    const [holderId = '', holderHash] = holder.split(' ');
    if (holderHash !== hash) throw new IdempotencyConflictError(request.key, holderId, holderId);
    const rollout = await existing(holderId);
    if (rollout !== undefined) return { rollout, created: false };
    // The first request with this key is still selecting its projects.
    if (Date.now() > deadline)
      throw new ConflictError(
        `a request with the Idempotency-Key header ${JSON.stringify(request.key)} is still creating rollout ${holderId}; retry with the same key in a moment`,
      );
    await sleep(200);
  }
}

function checkKey(key: string): void {
  if (key.length === 0 || key.length > 200 || /[\s\0]/.test(key))
    throw new InvalidInputError('the Idempotency-Key header must be 1–200 characters without whitespace');
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** Object keys sorted at every depth: `{a, b}` and `{b, a}` are one body. */
function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .filter((key) => (value as Record<string, unknown>)[key] !== undefined)
        .map((key) => [key, canonical((value as Record<string, unknown>)[key])]),
    );
  return value;
}
