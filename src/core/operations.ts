// Durable operations and their state machine (ARCHITECTURE.md "Operation
// lifecycle"), in one place. Every transition is one Lua script, so it is
// atomic and a terminal state can never change.
//
//   queued → running → succeeded | partially_succeeded | failed | cancelled
//   queued → cancelled | failed
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { JsonValue, OperateResult } from '@switchyard/plugin-sdk/protocol';
import type { Keys } from './keys.js';

export const OPERATION_STATES = [
  'queued',
  'running',
  'succeeded',
  'partially_succeeded',
  'failed',
  'cancelled',
] as const;
export type OperationState = (typeof OPERATION_STATES)[number];
export const TERMINAL_STATES: readonly OperationState[] = [
  'succeeded',
  'partially_succeeded',
  'failed',
  'cancelled',
];

export const OUTCOME_UNKNOWN = 'OUTCOME_UNKNOWN';
const IDEMPOTENCY_TTL_SECONDS = 7 * 24 * 3600;

/** CLI.md's JSON shape of an operation. */
export interface OperationView {
  id: string;
  pluginId: string;
  projectId: string;
  action: string;
  state: OperationState;
  errorCode?: string;
  errorMessage?: string;
  result?: OperateResult;
  requestedAt: string;
  startedAt?: string;
  finishedAt?: string;
}

export interface OperationRecord extends OperationView {
  input: JsonValue;
  requestedBy: string;
  idempotencyKey?: string;
  dispatched: boolean;
  dispatchedBy?: string;
  cancelRequested: boolean;
  worker?: string;
}

const TERMINAL_CSV = TERMINAL_STATES.join(',');

const LUA = {
  create: `
    if ARGV[1] == '1' then
      local existing = redis.call('GET', KEYS[2])
      if existing then return {0, existing} end
    end
    redis.call('HSET', KEYS[1], unpack(ARGV, 5))
    redis.call('ZADD', KEYS[3], ARGV[3], ARGV[4])
    if ARGV[1] == '1' then redis.call('SET', KEYS[2], ARGV[4], 'EX', ARGV[2]) end
    return {1, ARGV[4]}`,
  // ARGV: allowed-from csv, to, refuse-if-cancel-requested ('1'/'0'), field/value pairs...
  transition: `
    local state = redis.call('HGET', KEYS[1], 'state')
    if not state then return {'missing', ''} end
    if not string.find(',' .. ARGV[1] .. ',', ',' .. state .. ',', 1, true) then return {'refused', state} end
    if ARGV[3] == '1' and redis.call('HGET', KEYS[1], 'cancelRequested') == '1' then return {'cancel-requested', state} end
    redis.call('HSET', KEYS[1], 'state', ARGV[2], unpack(ARGV, 4))
    return {'ok', state}`,
  // KEYS: op, project lock. ARGV: lock value, now, worker
  dispatch: `
    if redis.call('HGET', KEYS[1], 'state') ~= 'running' then return 'not-running' end
    if redis.call('HGET', KEYS[1], 'cancelRequested') == '1' then return 'cancel-requested' end
    if redis.call('HGET', KEYS[1], 'dispatched') == '1' then return 'already-dispatched' end
    if redis.call('GET', KEYS[2]) ~= ARGV[1] then return 'lock-lost' end
    redis.call('HSET', KEYS[1], 'dispatched', '1', 'dispatchedAt', ARGV[2], 'dispatchedBy', ARGV[3])
    return 'ok'`,
  // KEYS: op. ARGV: now, channel, terminal csv
  cancel: `
    local state = redis.call('HGET', KEYS[1], 'state')
    if not state then return {'missing', ''} end
    if string.find(',' .. ARGV[3] .. ',', ',' .. state .. ',', 1, true) then return {'terminal', state} end
    if state == 'queued' then
      redis.call('HSET', KEYS[1], 'state', 'cancelled', 'finishedAt', ARGV[1], 'errorCode', 'CANCELLED',
        'errorMessage', 'cancelled before it started')
      return {'cancelled', state}
    end
    redis.call('HSET', KEYS[1], 'cancelRequested', '1')
    redis.call('PUBLISH', ARGV[2], KEYS[1])
    return {'requested', state}`,
  // KEYS: lock, fencing counter. ARGV: operation id, ttl ms
  acquireLock: `
    local current = redis.call('GET', KEYS[1])
    if current and string.sub(current, 1, #ARGV[1] + 1) ~= ARGV[1] .. ':' then return false end
    local value = ARGV[1] .. ':' .. redis.call('INCR', KEYS[2])
    redis.call('SET', KEYS[1], value, 'PX', ARGV[2])
    return value`,
  renewLock: `
    if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
    return 0`,
  releaseLock: `
    if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
    return 0`,
  // A lock left by a dead worker of this operation: any fencing token.
  releaseLockOf: `
    local current = redis.call('GET', KEYS[1])
    if current and string.sub(current, 1, #ARGV[1] + 1) == ARGV[1] .. ':' then return redis.call('DEL', KEYS[1]) end
    return 0`,
};

type LuaRedis = Redis & {
  syOpCreate(...args: (string | number)[]): Promise<[number, string]>;
  syOpTransition(...args: (string | number)[]): Promise<[string, string]>;
  syOpDispatch(...args: (string | number)[]): Promise<string>;
  syOpCancel(...args: (string | number)[]): Promise<[string, string]>;
  syLockAcquire(...args: (string | number)[]): Promise<string | null>;
  syLockRenew(...args: (string | number)[]): Promise<number>;
  syLockRelease(...args: (string | number)[]): Promise<number>;
  syLockReleaseOf(...args: (string | number)[]): Promise<number>;
};

export function defineOperationScripts(redis: Redis): LuaRedis {
  const lua = redis as LuaRedis;
  if (typeof lua.syOpCreate === 'function') return lua;
  redis.defineCommand('syOpCreate', { numberOfKeys: 3, lua: LUA.create });
  redis.defineCommand('syOpTransition', { numberOfKeys: 1, lua: LUA.transition });
  redis.defineCommand('syOpDispatch', { numberOfKeys: 2, lua: LUA.dispatch });
  redis.defineCommand('syOpCancel', { numberOfKeys: 1, lua: LUA.cancel });
  redis.defineCommand('syLockAcquire', { numberOfKeys: 2, lua: LUA.acquireLock });
  redis.defineCommand('syLockRenew', { numberOfKeys: 1, lua: LUA.renewLock });
  redis.defineCommand('syLockRelease', { numberOfKeys: 1, lua: LUA.releaseLock });
  redis.defineCommand('syLockReleaseOf', { numberOfKeys: 1, lua: LUA.releaseLockOf });
  return lua;
}

export interface NewOperation {
  pluginId: string;
  projectId: string;
  action: string;
  input: JsonValue;
  requestedBy: string;
  idempotencyKey?: string;
}

export type TransitionOutcome = 'ok' | 'refused' | 'missing' | 'cancel-requested';

export class OperationStore {
  readonly redis: LuaRedis;

  constructor(
    redis: Redis,
    readonly keys: Keys,
  ) {
    this.redis = defineOperationScripts(redis);
  }

  get cancelChannel(): string {
    return `${this.keys.prefix}:operation-cancel`;
  }

  /** Creates the record, or returns the existing one for a known idempotency key. */
  async create(input: NewOperation): Promise<{ operation: OperationRecord; created: boolean }> {
    const id = `op_${randomUUID()}`;
    const now = new Date();
    const fields: Record<string, string> = {
      id,
      pluginId: input.pluginId,
      projectId: input.projectId,
      action: input.action,
      input: JSON.stringify(input.input),
      state: 'queued',
      requestedAt: now.toISOString(),
      requestedBy: input.requestedBy,
      dispatched: '0',
      cancelRequested: '0',
      ...(input.idempotencyKey ? { idempotencyKey: input.idempotencyKey } : {}),
    };
    const [created, resultId] = await this.redis.syOpCreate(
      this.keys.operation(id),
      this.keys.idempotency(input.idempotencyKey ?? ''),
      this.keys.operationsByTime,
      input.idempotencyKey ? '1' : '0',
      IDEMPOTENCY_TTL_SECONDS,
      now.getTime(),
      id,
      ...Object.entries(fields).flat(),
    );
    const operation = await this.get(resultId);
    if (!operation) throw new Error(`operation ${resultId} vanished right after it was created`);
    return { operation, created: created === 1 };
  }

  async get(id: string): Promise<OperationRecord | undefined> {
    const hash = await this.redis.hgetall(this.keys.operation(id));
    return hash.id ? fromHash(hash) : undefined;
  }

  async list(options: { projectId?: string; limit?: number } = {}): Promise<OperationRecord[]> {
    const limit = options.limit ?? 50;
    const results: OperationRecord[] = [];
    let offset = 0;
    const page = Math.max(limit, 100);
    while (results.length < limit) {
      const ids = await this.redis.zrevrange(this.keys.operationsByTime, offset, offset + page - 1);
      if (ids.length === 0) break;
      offset += ids.length;
      const pipeline = this.redis.pipeline();
      for (const id of ids) pipeline.hgetall(this.keys.operation(id));
      for (const [, hash] of (await pipeline.exec()) ?? []) {
        const record =
          hash && (hash as Record<string, string>).id ? fromHash(hash as Record<string, string>) : undefined;
        if (record && (!options.projectId || record.projectId === options.projectId)) results.push(record);
        if (results.length >= limit) break;
      }
    }
    return results;
  }

  async transition(
    id: string,
    from: readonly OperationState[],
    to: OperationState,
    fields: Record<string, string> = {},
    options: { refuseIfCancelRequested?: boolean } = {},
  ): Promise<{ outcome: TransitionOutcome; previous: string }> {
    const now = new Date().toISOString();
    const extra = { ...fields, ...(TERMINAL_STATES.includes(to) ? { finishedAt: now } : {}) };
    const [outcome, previous] = await this.redis.syOpTransition(
      this.keys.operation(id),
      from.join(','),
      to,
      options.refuseIfCancelRequested ? '1' : '0',
      ...Object.entries(extra).flat(),
    );
    return { outcome: outcome as TransitionOutcome, previous };
  }

  /** Marks the operation dispatched, durably, if it still runs, is not cancelled and holds the project lock. */
  async markDispatched(id: string, projectId: string, lockValue: string, worker: string): Promise<string> {
    return this.redis.syOpDispatch(
      this.keys.operation(id),
      this.keys.projectLock(projectId),
      lockValue,
      new Date().toISOString(),
      worker,
    );
  }

  async requestCancel(
    id: string,
  ): Promise<{ outcome: 'missing' | 'terminal' | 'cancelled' | 'requested'; state: string }> {
    const [outcome, state] = await this.redis.syOpCancel(
      this.keys.operation(id),
      new Date().toISOString(),
      this.cancelChannel,
      TERMINAL_CSV,
    );
    return { outcome: outcome as 'missing' | 'terminal' | 'cancelled' | 'requested', state };
  }

  // ---- one operation at a time per project: a lock with expiry and a fencing token ----

  async acquireProjectLock(projectId: string, operationId: string, ttlMs: number): Promise<string | null> {
    return this.redis.syLockAcquire(this.keys.projectLock(projectId), this.keys.fencing, operationId, ttlMs);
  }

  async renewProjectLock(projectId: string, value: string, ttlMs: number): Promise<boolean> {
    return (await this.redis.syLockRenew(this.keys.projectLock(projectId), value, ttlMs)) === 1;
  }

  async releaseProjectLock(projectId: string, value: string): Promise<void> {
    await this.redis.syLockRelease(this.keys.projectLock(projectId), value);
  }

  /** Releases the project lock if this operation holds it, whoever took it (a dead worker). */
  async releaseProjectLockOf(projectId: string, operationId: string): Promise<void> {
    await this.redis.syLockReleaseOf(this.keys.projectLock(projectId), operationId);
  }
}

export function isTerminal(state: string): boolean {
  return (TERMINAL_STATES as readonly string[]).includes(state);
}

export function toOperationView(record: OperationRecord): OperationView {
  return {
    id: record.id,
    pluginId: record.pluginId,
    projectId: record.projectId,
    action: record.action,
    state: record.state,
    ...(record.errorCode ? { errorCode: record.errorCode } : {}),
    ...(record.errorMessage ? { errorMessage: record.errorMessage } : {}),
    ...(record.result ? { result: record.result } : {}),
    requestedAt: record.requestedAt,
    ...(record.startedAt ? { startedAt: record.startedAt } : {}),
    ...(record.finishedAt ? { finishedAt: record.finishedAt } : {}),
  };
}

function fromHash(hash: Record<string, string>): OperationRecord {
  return {
    id: hash.id!,
    pluginId: hash.pluginId ?? '',
    projectId: hash.projectId ?? '',
    action: hash.action ?? '',
    state: (hash.state ?? 'queued') as OperationState,
    ...(hash.errorCode ? { errorCode: hash.errorCode } : {}),
    ...(hash.errorMessage ? { errorMessage: hash.errorMessage } : {}),
    ...(hash.result ? { result: JSON.parse(hash.result) as OperateResult } : {}),
    requestedAt: hash.requestedAt ?? '',
    ...(hash.startedAt ? { startedAt: hash.startedAt } : {}),
    ...(hash.finishedAt ? { finishedAt: hash.finishedAt } : {}),
    input: hash.input ? (JSON.parse(hash.input) as JsonValue) : null,
    requestedBy: hash.requestedBy ?? '',
    ...(hash.idempotencyKey ? { idempotencyKey: hash.idempotencyKey } : {}),
    dispatched: hash.dispatched === '1',
    ...(hash.dispatchedBy ? { dispatchedBy: hash.dispatchedBy } : {}),
    cancelRequested: hash.cancelRequested === '1',
    ...(hash.worker ? { worker: hash.worker } : {}),
  };
}
