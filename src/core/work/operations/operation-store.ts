// Durable operations and their state machine (docs/ARCHITECTURE.md "Operation
// lifecycle"), in one place. Every transition is one Lua script (./lua), so it
// is atomic and a terminal state can never change; each publishes the new state
// on the operation's events channel (operation-follow.ts). The lifecycle that
// drives these transitions is operation-runner.ts.
//
//   queued → running → succeeded | partially_succeeded | failed | cancelled
//   queued → cancelled | failed
import { createHash, randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { JsonValue, OperateResult } from '@switchyard/plugin-sdk/protocol';
import type { Redacted } from '../../plugins/index.js';
import type {
  CancelOutcome,
  DispatchOutcome,
  Keys,
  Scripts,
  Page,
  PageRequest,
  TransitionOutcome,
} from '../../redis/index.js';
import { scriptsOn, sortedSetPage } from '../../redis/index.js';
import { operationCancelMessage, operationStateMessage } from './operation-messages.js';
import { ERROR_CODES } from '../../platform/index.js';
import { redactDeep } from '../../safety/index.js';

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

/**
 * What `op list --state` selects: a state, or `outcome_unknown` — the failed
 * operations whose plugin may have acted (OUTCOME_UNKNOWN), the one outcome
 * that needs a person to look. `failed` still selects every failed one.
 */
export const OPERATION_FILTERS = [...OPERATION_STATES, 'outcome_unknown'] as const;
export type OperationFilter = (typeof OPERATION_FILTERS)[number];

/** The state a person reads: `outcome unknown` for a failed operation whose plugin may have acted. */
export function operationOutcome(operation: { state: OperationState; errorCode?: string }): string {
  return operation.state === 'failed' && operation.errorCode === ERROR_CODES.OUTCOME_UNKNOWN
    ? 'outcome unknown'
    : operation.state;
}

export interface OperationQuery extends PageRequest {
  projectId?: string;
  pluginId?: string;
  state?: OperationFilter;
  /** Who requested it (`token:<name>`, `user:<name>@<host>`). */
  requestedBy?: string;
}
const IDEMPOTENCY_TTL_SECONDS = 7 * 24 * 3600;

/** docs/CLI.md's JSON shape of an operation. */
export interface OperationView {
  id: string;
  pluginId: string;
  projectId: string;
  action: string;
  state: OperationState;
  errorCode?: string;
  errorMessage?: string;
  /** Failed, and the plugin may have acted (OUTCOME_UNKNOWN): a person must look before running it again. */
  outcomeUnknown?: true;
  /** As the plugin returned it, redacted (PROTOCOL §10). */
  result?: Redacted<OperateResult>;
  requestedAt: string;
  startedAt?: string;
  finishedAt?: string;
  /** The shorter time limit the request asked for (ms); the plugin's operate limit otherwise. */
  timeoutMs?: number;
  /** The action input as requested, redacted like a result (absent from servers before it was shown). */
  input?: JsonValue;
  /** Who requested it: the audit actor (`token:<name>`, `user:<name>@<host>`). */
  requestedBy?: string;
  /** Who asked to cancel it first, when anyone did. */
  cancelledBy?: string;
  /** The worker that ran it (`worker:<host>:<pid>`), once one started it. */
  worker?: string;
  /** From started to finished, once both are known. */
  durationMs?: number;
  /** While it runs: its call waits for the plugin's caps (plugin-caps.ts), and why. */
  waiting?: string;
  /** While it runs: its worker stopped beating (operation-liveness.ts); only a single operation's read has it. */
  workerLost?: WorkerLost;
}

/** A running operation's worker that no longer beats, and when the operation will end OUTCOME_UNKNOWN. */
export interface WorkerLost {
  worker: string;
  /** Since its worker last wrote its heartbeat. */
  silentForMs: number;
  /** Until its job lock lapses (0: lapsed; a stalled check ends it any moment). */
  lockExpiresInMs: number;
  message: string;
}

export interface OperationRecord extends Omit<
  OperationView,
  'durationMs' | 'input' | 'requestedBy' | 'workerLost'
> {
  input: JsonValue;
  requestedBy: string;
  idempotencyKey?: string;
  /** requestHash() of the request (records made before it was kept have none). */
  requestHash?: string;
  dispatched: boolean;
  dispatchedBy?: string;
  cancelRequested: boolean;
}

const TERMINAL_CSV = TERMINAL_STATES.join(',');

export interface NewOperation {
  pluginId: string;
  projectId: string;
  action: string;
  input: JsonValue;
  requestedBy: string;
  idempotencyKey?: string;
  /** requestHash() of the request: what its idempotency key is bound to. */
  requestHash?: string;
  timeoutMs?: number;
}

export class OperationStore {
  readonly #scripts: Scripts;

  constructor(
    readonly redis: Redis,
    readonly keys: Keys,
  ) {
    this.#scripts = scriptsOn(redis);
  }

  get cancelChannel(): string {
    return this.keys.operationCancelChannel;
  }

  /** Where every state written to the operation is published (transition and cancel scripts). */
  eventsChannel(id: string): string {
    return this.keys.operationEvents(id);
  }

  /** The operation an idempotency key names, if any. */
  async byIdempotencyKey(key: string): Promise<OperationRecord | undefined> {
    const id = await this.redis.get(this.keys.idempotency(key));
    return id ? this.get(id) : undefined;
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
      ...(input.requestHash ? { requestHash: input.requestHash } : {}),
      ...(input.timeoutMs ? { timeoutMs: String(input.timeoutMs) } : {}),
    };
    const [created, resultId] = await this.#scripts.operationCreate(
      [
        this.keys.operation(id),
        this.keys.idempotency(input.idempotencyKey ?? ''),
        this.keys.operationsByTime,
      ],
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

  /**
   * Its call waits for the plugin's caps (reason), or no longer does
   * (undefined). Shown while it runs; the state stays `running`, never failed.
   */
  async noteWaiting(id: string, reason: string | undefined): Promise<void> {
    if (reason === undefined) await this.redis.hdel(this.keys.operation(id), 'waiting');
    else await this.redis.hset(this.keys.operation(id), 'waiting', reason);
  }

  async get(id: string): Promise<OperationRecord | undefined> {
    const hash = await this.redis.hgetall(this.keys.operation(id));
    return hash.id ? fromHash(hash) : undefined;
  }

  /** Newest first, filtered by project, plugin and state, one page (pages.ts). */
  list(query: OperationQuery = {}): Promise<Page<OperationRecord>> {
    return sortedSetPage(
      this.redis,
      this.keys.operationsByTime,
      query,
      async (ids) => {
        const pipeline = this.redis.pipeline();
        for (const id of ids) pipeline.hgetall(this.keys.operation(id));
        return ((await pipeline.exec()) ?? []).map(([, hash]) => {
          const fields = hash as Record<string, string> | null;
          return fields?.id ? fromHash(fields) : undefined;
        });
      },
      (record) =>
        (query.projectId === undefined || record.projectId === query.projectId) &&
        (query.pluginId === undefined || record.pluginId === query.pluginId) &&
        (query.requestedBy === undefined || record.requestedBy === query.requestedBy) &&
        (query.state === undefined ||
          record.state === query.state ||
          (query.state === 'outcome_unknown' && operationOutcome(record) === 'outcome unknown')),
    );
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
    const [outcome, previous] = await this.#scripts.operationTransition(
      [this.keys.operation(id)],
      from.join(','),
      to,
      options.refuseIfCancelRequested ? '1' : '0',
      this.eventsChannel(id),
      operationStateMessage.encode(to),
      TERMINAL_CSV,
      ...Object.entries(extra).flat(),
    );
    return { outcome, previous };
  }

  /** Marks the operation dispatched, durably, if it still runs, is not cancelled and holds the project lock (by its projectLockName). */
  async markDispatched(
    id: string,
    lockName: string,
    lockValue: string,
    worker: string,
  ): Promise<DispatchOutcome> {
    return this.#scripts.operationDispatch(
      [this.keys.operation(id), this.keys.projectLock(lockName)],
      lockValue,
      new Date().toISOString(),
      worker,
    );
  }

  /** `actor` is kept as the operation's cancelledBy (the first one who asked). */
  async requestCancel(id: string, actor: string): Promise<{ outcome: CancelOutcome; state: string }> {
    const [outcome, state] = await this.#scripts.operationCancel(
      [this.keys.operation(id)],
      new Date().toISOString(),
      this.cancelChannel,
      TERMINAL_CSV,
      this.eventsChannel(id),
      ERROR_CODES.CANCELLED,
      'cancelled before it started',
      operationCancelMessage.encode(id),
      operationStateMessage.encode('cancelled'),
      actor,
    );
    return { outcome, state };
  }

  /** Deletes terminal operations requested before the cut-off, with their idempotency keys; returns how many. */
  async deleteFinishedBefore(cutoffMs: number): Promise<number> {
    let deleted = 0;
    for (const id of await this.redis.zrangebyscore(this.keys.operationsByTime, 0, cutoffMs)) {
      // The key is read first to be built here; the script deletes nothing if it changed meanwhile.
      const idempotencyKey = (await this.redis.hget(this.keys.operation(id), 'idempotencyKey')) ?? '';
      const removed = await this.#scripts.operationDelete(
        [this.keys.operation(id), this.keys.operationsByTime, this.keys.idempotency(idempotencyKey)],
        id,
        TERMINAL_CSV,
        idempotencyKey,
      );
      // Its stderr goes with it.
      if (removed === 1) await this.redis.del(this.keys.operationLogs(id));
      deleted += removed;
    }
    return deleted;
  }
}

/**
 * What an idempotency key binds: plugin, project, action and the input as
 * canonical JSON (object keys sorted), hashed.
 */
export function requestHash(request: {
  pluginId: string;
  projectId: string;
  action: string;
  input: JsonValue;
}): string {
  const canonical = JSON.stringify([
    request.pluginId,
    request.projectId,
    request.action,
    canonicalJson(request.input),
  ]);
  return createHash('sha256').update(canonical).digest('hex');
}

function canonicalJson(value: JsonValue): JsonValue {
  if (Array.isArray(value)) return value.map(canonicalJson);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((key) => [key, canonicalJson((value as Record<string, JsonValue>)[key]!)]),
    );
  }
  return value;
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
    ...(operationOutcome(record) === 'outcome unknown' ? { outcomeUnknown: true as const } : {}),
    ...(record.result ? { result: record.result } : {}),
    requestedAt: record.requestedAt,
    ...(record.startedAt ? { startedAt: record.startedAt } : {}),
    ...(record.finishedAt ? { finishedAt: record.finishedAt } : {}),
    ...(record.timeoutMs ? { timeoutMs: record.timeoutMs } : {}),
    input: redactDeep(record.input),
    requestedBy: record.requestedBy,
    ...(record.cancelledBy ? { cancelledBy: record.cancelledBy } : {}),
    ...(record.worker ? { worker: record.worker } : {}),
    ...(record.waiting && record.state === 'running' ? { waiting: record.waiting } : {}),
    ...durationOf(record),
  };
}

function durationOf(record: { startedAt?: string; finishedAt?: string }): { durationMs?: number } {
  if (!record.startedAt || !record.finishedAt) return {};
  const duration = Date.parse(record.finishedAt) - Date.parse(record.startedAt);
  return Number.isFinite(duration) && duration >= 0 ? { durationMs: duration } : {};
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
    ...(hash.timeoutMs ? { timeoutMs: Number(hash.timeoutMs) } : {}),
    input: hash.input ? (JSON.parse(hash.input) as JsonValue) : null,
    requestedBy: hash.requestedBy ?? '',
    ...(hash.idempotencyKey ? { idempotencyKey: hash.idempotencyKey } : {}),
    ...(hash.requestHash ? { requestHash: hash.requestHash } : {}),
    dispatched: hash.dispatched === '1',
    ...(hash.dispatchedBy ? { dispatchedBy: hash.dispatchedBy } : {}),
    cancelRequested: hash.cancelRequested === '1',
    ...(hash.cancelledBy ? { cancelledBy: hash.cancelledBy } : {}),
    ...(hash.worker ? { worker: hash.worker } : {}),
    ...(hash.waiting ? { waiting: hash.waiting } : {}),
  };
}
