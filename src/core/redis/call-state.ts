// The call-state token: a random value replaced in the same MULTI as every
// change a plugin call's checks depend on (PROTOCOL §9.1: a plugin's trust,
// enable state and grants, a project's trust or removal) and after a batch is
// marked cancelled. A batch job reads that state once for all its projects and
// keeps it while the token is what it was: one GET per call sees any such
// change acknowledged before the call starts. Random, not a counter: a Redis
// that lost its latest writes can never hand back a value a job already saw
// with other state behind it.
import { randomBytes } from 'node:crypto';
import type { ChainableCommander, Redis } from 'ioredis';
import type { Keys } from './keys.js';

/** Queues the token's replacement on a MULTI (or pipeline) that changes call state; returns it. */
export function markCallStateChanged<T extends ChainableCommander>(multi: T, keys: Keys): T {
  multi.set(keys.callState, randomBytes(16).toString('hex'));
  return multi;
}

/** The token now ('' while no change was ever made). */
export async function readCallState(redis: Redis, keys: Keys): Promise<string> {
  return (await redis.get(keys.callState)) ?? '';
}
