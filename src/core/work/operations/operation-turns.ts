// Operations fair between requesters (docs/adr/0010-fair-share-inspections.md):
// each queued operate job gets a BullMQ priority that is its requester's turn (operation-turn.lua), so two people's queued operations
// alternate instead of leaving in the order they came; one requester's stay
// in order. Operations keep their own queue, ahead of inspections (ADR 0005).
import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { scriptsOn, type Keys } from '../../redis/index.js';

/** BullMQ's highest priority number (2^21 - 1): a turn never passes it. */
const TURN_LIMIT = 2 ** 21 - 1;

/** The BullMQ priority of a new operation of `requester`: its turn. */
export async function nextTurn(redis: Redis, keys: Keys, queue: Queue, requester: string): Promise<number> {
  const queued = await queue.getJobCountByTypes('wait', 'prioritized', 'delayed');
  return scriptsOn(redis).operationTurn([keys.operationTurns], requester, queued, TURN_LIMIT);
}

/** A worker took a job of this turn (its priority; 0 for a job queued before turns existed). */
export async function turnTaken(redis: Redis, keys: Keys, turn: number | undefined): Promise<void> {
  if (!turn) return;
  await scriptsOn(redis).operationServed([keys.operationTurns], turn);
}
