// A rollout's durable state in Redis (docs/ARCHITECTURE.md "Rollouts"): one
// hash (plan, state, cursor, counts), the selected projects in wave order (a
// list), each project's state and operation (two hashes), the projects in
// flight (a set: all the sweep reads), the rollouts by time and the active
// ones. Every change of state is one Lua script (./lua in
// the redis room): rollout-step claims and records, rollout-started links an
// operation, rollout-control is a person's approve, pause, resume or cancel.
// A rollout with a preview action has the same for its previews: their
// states and operations (two more hashes), p_<bucket> counts and a cursor
// (pnext) in the rollout hash, stepped by rollout-preview-step.
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { JsonValue } from '@switchyard/plugin-sdk/protocol';
import {
  scriptsOn,
  sortedSetPage,
  type Keys,
  type Page,
  type PageRequest,
  type Scripts,
} from '../../redis/index.js';

export const ROLLOUT_STATES = [
  'previewing',
  'awaiting-approval',
  'running',
  'paused',
  'succeeded',
  'failed',
  'cancelled',
] as const;
export type RolloutState = (typeof ROLLOUT_STATES)[number];
export const ENDED_ROLLOUT_STATES: readonly RolloutState[] = ['succeeded', 'failed', 'cancelled'];

export function isRolloutOver(state: string): boolean {
  return (ENDED_ROLLOUT_STATES as readonly string[]).includes(state);
}

/** A project's state in a rollout: `starting` is claimed, its operation being created. */
export const ROLLOUT_PROJECT_STATES = [
  'pending',
  'starting',
  'running',
  'succeeded',
  'failed',
  'cancelled',
  'outcome_unknown',
] as const;
export type RolloutProjectState = (typeof ROLLOUT_PROJECT_STATES)[number];
/** How a project's operation ended, as the rollout counts it. */
export type RolloutProjectEnd = 'succeeded' | 'failed' | 'cancelled' | 'outcome_unknown';

export const COUNT_NAMES = [
  'pending',
  'running',
  'succeeded',
  'failed',
  'cancelled',
  'outcome_unknown',
] as const;
export type RolloutCounts = Record<(typeof COUNT_NAMES)[number], number>;

export interface SkippedProject {
  projectId: string;
  reason: string;
}

export interface RolloutRecord {
  id: string;
  name: string;
  pluginId: string;
  action: string;
  input: JsonValue;
  state: RolloutState;
  /** The action's risk as the selected projects' latest inspections advertised it (`unknown` when none did). */
  risk: string;
  createdBy: string;
  /** The creating token's id (docs/CLI.md "two-person rule"); none for a local OS user. */
  createdByTokenId?: string;
  approvedBy?: string;
  total: number;
  skipped: SkippedProject[];
  /** Each wave's cumulative end, in projects of the selection. */
  waveEnds: number[];
  /** The wave running now (index from 0). */
  wave: number;
  /** How many projects of the selection have been claimed to start. */
  next: number;
  concurrency: number;
  maxFailures: number;
  pauseBetween: boolean;
  /** How the selection was given (`--all`, `--label x`, `--where …`, `--advertised`, project ids). */
  selection: string[];
  counts: RolloutCounts;
  createdAt: string;
  startedAt?: string;
  finishedAt?: string;
  pausedReason?: string;
  /** `budget` (only an admin resumes), `wave` (--pause-between), `person`. */
  pausedKind?: string;
  cancelledBy?: string;
  retryOf?: string;
  /** The action of risk none run first on every project (--preview-action). */
  previewAction?: string;
  /** How the previews stand (with a preview action only). */
  previewCounts?: RolloutCounts;
}

export type NewRollout = Omit<
  RolloutRecord,
  | 'id'
  | 'state'
  | 'wave'
  | 'next'
  | 'counts'
  | 'createdAt'
  | 'approvedBy'
  | 'startedAt'
  | 'finishedAt'
  | 'previewCounts'
> & { state: 'previewing' | 'awaiting-approval' | 'running' };

/** A project's preview: its state and, once it has one, its operation. */
export interface RolloutPreviewEntry {
  projectId: string;
  state: RolloutProjectState;
  operationId?: string;
}

/** An Idempotency-Key held by the rollout being created: its key in Redis and what it holds. */
export interface HeldKey {
  redisKey: string;
  value: string;
}

/** How long an Idempotency-Key of a rollout names it (as an operation's). */
export const IDEMPOTENCY_TTL_SECONDS = 7 * 24 * 3600;

export type RolloutProjectRow = { projectId: string; state: RolloutProjectState; operationId?: string };

export interface RolloutQuery extends PageRequest {
  state?: RolloutState;
  pluginId?: string;
}

/** The prefix of the rollout hash's fields that mark an event not yet published (rollout-step.lua). */
const UNANNOUNCED = 'unannounced:';

export class RolloutStore {
  readonly #scripts: Scripts;

  constructor(
    readonly redis: Redis,
    readonly keys: Keys,
  ) {
    this.#scripts = scriptsOn(redis);
  }

  /** Writes the rollout, its projects (all pending) and its index entries in one transaction. */
  async create(
    input: NewRollout,
    projectIds: readonly string[],
    options: { id?: string; heldKey?: HeldKey } = {},
  ): Promise<RolloutRecord> {
    const id = options.id ?? newRolloutId();
    const now = new Date();
    const fields: Record<string, string> = {
      id,
      name: input.name,
      pluginId: input.pluginId,
      action: input.action,
      input: JSON.stringify(input.input),
      state: input.state,
      risk: input.risk,
      createdBy: input.createdBy,
      ...(input.createdByTokenId ? { createdByTokenId: input.createdByTokenId } : {}),
      total: String(input.total),
      skipped: JSON.stringify(input.skipped),
      waves: JSON.stringify(input.waveEnds),
      wave: '0',
      next: '0',
      concurrency: String(input.concurrency),
      maxFailures: String(input.maxFailures),
      budgetBase: '0',
      pauseBetween: input.pauseBetween ? '1' : '0',
      selection: JSON.stringify(input.selection),
      ...(input.retryOf ? { retryOf: input.retryOf } : {}),
      ...(input.previewAction
        ? {
            previewAction: input.previewAction,
            pnext: '0',
            ...Object.fromEntries(COUNT_NAMES.map((name) => [`p_${name}`, '0'])),
            p_pending: String(projectIds.length),
          }
        : {}),
      createdAt: now.toISOString(),
      ...(input.state === 'running' ? { startedAt: now.toISOString() } : {}),
      // Published by the creator right after; by the sweep if the creator died first (see step()).
      ...(input.state === 'awaiting-approval' ? { [`${UNANNOUNCED}awaiting-approval`]: '1' } : {}),
      ...Object.fromEntries(COUNT_NAMES.map((name) => [`c_${name}`, '0'])),
      c_pending: String(projectIds.length),
    };
    const multi = this.redis.multi();
    multi.hset(this.keys.rollout(id), fields);
    if (projectIds.length > 0) {
      multi.rpush(this.keys.rolloutProjects(id), ...projectIds);
      multi.hset(
        this.keys.rolloutStates(id),
        Object.fromEntries(projectIds.map((projectId) => [projectId, 'pending'])),
      );
      if (input.previewAction)
        multi.hset(
          this.keys.rolloutPreviewStates(id),
          Object.fromEntries(projectIds.map((projectId) => [projectId, 'pending'])),
        );
    }
    multi.zadd(this.keys.rolloutsByTime, now.getTime(), id);
    multi.sadd(this.keys.rolloutsActive, id);
    // The key reserved for a short while before the selection now names the rollout for its whole time.
    if (options.heldKey)
      multi.set(options.heldKey.redisKey, options.heldKey.value, 'EX', IDEMPOTENCY_TTL_SECONDS);
    await multi.exec();
    const record = await this.get(id);
    if (!record) throw new Error(`rollout ${id} vanished right after it was created`);
    return record;
  }

  async get(id: string): Promise<RolloutRecord | undefined> {
    const hash = await this.redis.hgetall(this.keys.rollout(id));
    return hash.id ? fromHash(hash) : undefined;
  }

  /** Newest first, filtered by state and plugin, one page. */
  list(query: RolloutQuery = {}): Promise<Page<RolloutRecord>> {
    return sortedSetPage(
      this.redis,
      this.keys.rolloutsByTime,
      query,
      async (ids) => {
        const pipeline = this.redis.pipeline();
        for (const id of ids) pipeline.hgetall(this.keys.rollout(id));
        return ((await pipeline.exec()) ?? []).map(([, hash]) => {
          const fields = hash as Record<string, string> | null;
          return fields?.id ? fromHash(fields) : undefined;
        });
      },
      (record) =>
        (query.state === undefined || record.state === query.state) &&
        (query.pluginId === undefined || record.pluginId === query.pluginId),
    );
  }

  /** Each selected project in wave order: its state and, once it has one, its operation. */
  async projects(id: string): Promise<RolloutProjectRow[]> {
    const [ids, states, operations] = await Promise.all([
      this.redis.lrange(this.keys.rolloutProjects(id), 0, -1),
      this.redis.hgetall(this.keys.rolloutStates(id)),
      this.redis.hgetall(this.keys.rolloutOperations(id)),
    ]);
    return ids.map((projectId) => ({
      projectId,
      state: (states[projectId] ?? 'pending') as RolloutProjectState,
      ...(operations[projectId] ? { operationId: operations[projectId] } : {}),
    }));
  }

  /**
   * The projects from position `start` of the wave order, `count` of them
   * (fewer at the end): one LRANGE and two HMGETs, whatever the rollout's size.
   */
  async projectRange(id: string, start: number, count: number): Promise<RolloutProjectRow[]> {
    const ids = await this.redis.lrange(this.keys.rolloutProjects(id), start, start + count - 1);
    return this.#rows(id, ids);
  }

  /**
   * The projects in flight (`starting` or `running`): the in-flight set
   * rollout-step.lua keeps, read with their states and operations. A member
   * that is no longer in flight is dropped; fewer members than the rollout
   * counts running (a rollout written before the set was kept) are found
   * again in its states hash, once.
   */
  async inFlight(id: string): Promise<RolloutProjectRow[]> {
    const [[, running], [, members]] = ((await this.redis
      .multi()
      .hget(this.keys.rollout(id), 'c_running')
      .smembers(this.keys.rolloutInFlight(id))
      .exec()) ?? []) as [[unknown, string | null], [unknown, string[]]];
    let rows = await this.#rows(id, members);
    const stale = rows.filter((row) => !isInFlight(row.state)).map((row) => row.projectId);
    if (stale.length > 0) await this.redis.srem(this.keys.rolloutInFlight(id), ...stale);
    rows = rows.filter((row) => isInFlight(row.state));
    if (rows.length < Number(running ?? 0)) {
      const states = await this.redis.hgetall(this.keys.rolloutStates(id));
      const found = Object.keys(states).filter((projectId) => isInFlight(states[projectId]!));
      if (found.length > 0) await this.redis.sadd(this.keys.rolloutInFlight(id), ...found);
      rows = await this.#rows(id, found);
    }
    return rows;
  }

  async #rows(id: string, projectIds: readonly string[]): Promise<RolloutProjectRow[]> {
    if (projectIds.length === 0) return [];
    const [states, operations] = await Promise.all([
      this.redis.hmget(this.keys.rolloutStates(id), ...projectIds),
      this.redis.hmget(this.keys.rolloutOperations(id), ...projectIds),
    ]);
    return projectIds.map((projectId, index) => ({
      projectId,
      state: (states[index] ?? 'pending') as RolloutProjectState,
      ...(operations[index] ? { operationId: operations[index] } : {}),
    }));
  }

  /** Holds an Idempotency-Key for a rollout about to be created, unless it is held; answers who holds it. */
  async holdKey(key: HeldKey, seconds: number): Promise<string | undefined> {
    const set = await this.redis.set(key.redisKey, key.value, 'EX', seconds, 'NX');
    if (set === 'OK') return undefined;
    return (await this.redis.get(key.redisKey)) ?? undefined;
  }

  /** Lets go of a held key whose rollout was never created (its request was refused). */
  async releaseKey(key: HeldKey): Promise<void> {
    await this.#scripts.lockRelease([key.redisKey], key.value);
  }

  /**
   * rollout-step.lua: records a project's end (when given), then claims the
   * projects to start now. Answers the state after it, what happened
   * (`paused`, `finished`: also marked unannounced until published) and the
   * claimed project ids.
   */
  async step(
    id: string,
    ended?: { projectId: string; end: RolloutProjectEnd },
  ): Promise<{ state: string; events: string[]; claimed: string[] }> {
    const [state, events, ...claimed] = await this.#scripts.rolloutStep(
      [
        this.keys.rollout(id),
        this.keys.rolloutProjects(id),
        this.keys.rolloutStates(id),
        this.keys.rolloutsActive,
        this.keys.rolloutInFlight(id),
      ],
      new Date().toISOString(),
      id,
      ended?.projectId ?? '',
      ended?.end ?? '',
    );
    return { state: state ?? 'missing', events: JSON.parse(events ?? '[]') as string[], claimed };
  }

  /** Each selected project's preview in wave order: its state and, once it has one, its operation. */
  async previews(id: string): Promise<RolloutPreviewEntry[]> {
    const [ids, states, operations] = await Promise.all([
      this.redis.lrange(this.keys.rolloutProjects(id), 0, -1),
      this.redis.hgetall(this.keys.rolloutPreviewStates(id)),
      this.redis.hgetall(this.keys.rolloutPreviewOperations(id)),
    ]);
    return ids.map((projectId) => ({
      projectId,
      state: (states[projectId] ?? 'pending') as RolloutProjectState,
      ...(operations[projectId] ? { operationId: operations[projectId] } : {}),
    }));
  }

  /**
   * rollout-preview-step.lua: records a preview's end (when given), then
   * claims the previews to start now; `awaiting-approval` among the events
   * once every preview has ended.
   */
  async previewStep(
    id: string,
    ended?: { projectId: string; end: RolloutProjectEnd },
  ): Promise<{ state: string; events: string[]; claimed: string[] }> {
    const [state, events, ...claimed] = await this.#scripts.rolloutPreviewStep(
      [
        this.keys.rollout(id),
        this.keys.rolloutProjects(id),
        this.keys.rolloutPreviewStates(id),
        this.keys.rolloutsActive,
      ],
      new Date().toISOString(),
      id,
      ended?.projectId ?? '',
      ended?.end ?? '',
    );
    return { state: state ?? 'missing', events: JSON.parse(events ?? '[]') as string[], claimed };
  }

  /** rollout-started.lua on the preview hashes: the project's preview operation exists. */
  async previewStarted(id: string, projectId: string, operationId: string): Promise<boolean> {
    const moved = await this.#scripts.rolloutStarted(
      [
        this.keys.rolloutPreviewStates(id),
        this.keys.rolloutPreviewOperations(id),
        this.keys.rolloutOfOperation,
      ],
      projectId,
      operationId,
      id,
    );
    return moved === 1;
  }

  /** Whether this operation is the preview of its project in the rollout (not its real run). */
  async isPreview(id: string, projectId: string, operationId: string): Promise<boolean> {
    return (await this.redis.hget(this.keys.rolloutPreviewOperations(id), projectId)) === operationId;
  }

  /** rollout-started.lua: the project's operation exists; true when the project was still starting. */
  async started(id: string, projectId: string, operationId: string): Promise<boolean> {
    const moved = await this.#scripts.rolloutStarted(
      [this.keys.rolloutStates(id), this.keys.rolloutOperations(id), this.keys.rolloutOfOperation],
      projectId,
      operationId,
      id,
    );
    return moved === 1;
  }

  /** rollout-control.lua: a person's change of state, when the current state allows it. */
  async control(
    id: string,
    from: readonly RolloutState[],
    to: RolloutState,
    fields: Record<string, string>,
    options: { resetBudget?: boolean } = {},
  ): Promise<{ outcome: string; previous: string }> {
    const [outcome, previous] = await this.#scripts.rolloutControl(
      [
        this.keys.rollout(id),
        this.keys.rolloutProjects(id),
        this.keys.rolloutStates(id),
        this.keys.rolloutsActive,
      ],
      from.join(','),
      to,
      id,
      options.resetBudget ? '1' : '0',
      ...Object.entries(fields).flat(),
    );
    return { outcome, previous };
  }

  /** Why a project failed without an operation (its operation was refused). */
  async noteError(
    id: string,
    projectId: string,
    error: { errorCode: string; errorMessage: string },
    options: { preview?: boolean } = {},
  ): Promise<void> {
    const hash = options.preview ? this.keys.rolloutPreviewOperations(id) : this.keys.rolloutOperations(id);
    await this.redis.hset(hash, `error:${projectId}`, JSON.stringify(error));
  }

  async errors(
    id: string,
    projectIds: readonly string[],
    options: { preview?: boolean } = {},
  ): Promise<({ errorCode: string; errorMessage: string } | undefined)[]> {
    if (projectIds.length === 0) return [];
    const values = await this.redis.hmget(
      options.preview ? this.keys.rolloutPreviewOperations(id) : this.keys.rolloutOperations(id),
      ...projectIds.map((projectId) => `error:${projectId}`),
    );
    return values.map((value) =>
      value ? (JSON.parse(value) as { errorCode: string; errorMessage: string }) : undefined,
    );
  }

  /**
   * The rollout's events whose webhooks no process has published yet
   * (`awaiting-approval`, `paused:<pausedAt>`, `finished`): a process that
   * produced one died before publishing it, or is publishing it now.
   */
  async unannounced(id: string): Promise<{ event: string; reason: string }[]> {
    const hash = await this.redis.hgetall(this.keys.rollout(id));
    return Object.entries(hash)
      .filter(([field]) => field.startsWith(UNANNOUNCED))
      .map(([field, value]) => ({ event: field.slice(UNANNOUNCED.length), reason: value }));
  }

  /** The event's webhooks are published (enqueued). */
  async announced(id: string, event: string): Promise<void> {
    await this.redis.hdel(this.keys.rollout(id), `${UNANNOUNCED}${event}`);
  }

  /** The rollouts the sweep looks at. */
  active(): Promise<string[]> {
    return this.redis.smembers(this.keys.rolloutsActive);
  }

  /** The rollout an operation was started by, if any. */
  async rolloutOf(operationId: string): Promise<string | undefined> {
    return (await this.redis.hget(this.keys.rolloutOfOperation, operationId)) ?? undefined;
  }
}

export function newRolloutId(): string {
  return `rollout_${randomUUID()}`;
}

function isInFlight(state: string | undefined): boolean {
  return state === 'starting' || state === 'running';
}

function fromHash(hash: Record<string, string>): RolloutRecord {
  const counts = Object.fromEntries(
    COUNT_NAMES.map((name) => [name, Number(hash[`c_${name}`] ?? 0)]),
  ) as RolloutCounts;
  return {
    id: hash.id!,
    name: hash.name ?? '',
    pluginId: hash.pluginId ?? '',
    action: hash.action ?? '',
    input: hash.input ? (JSON.parse(hash.input) as JsonValue) : {},
    state: (hash.state ?? 'running') as RolloutState,
    risk: hash.risk ?? 'unknown',
    createdBy: hash.createdBy ?? '',
    ...(hash.createdByTokenId ? { createdByTokenId: hash.createdByTokenId } : {}),
    ...(hash.approvedBy ? { approvedBy: hash.approvedBy } : {}),
    total: Number(hash.total ?? 0),
    skipped: hash.skipped ? (JSON.parse(hash.skipped) as SkippedProject[]) : [],
    waveEnds: hash.waves ? (JSON.parse(hash.waves) as number[]) : [],
    wave: Number(hash.wave ?? 0),
    next: Number(hash.next ?? 0),
    concurrency: Number(hash.concurrency ?? 1),
    maxFailures: Number(hash.maxFailures ?? 0),
    pauseBetween: hash.pauseBetween === '1',
    selection: hash.selection ? (JSON.parse(hash.selection) as string[]) : [],
    counts,
    createdAt: hash.createdAt ?? '',
    ...(hash.startedAt ? { startedAt: hash.startedAt } : {}),
    ...(hash.finishedAt ? { finishedAt: hash.finishedAt } : {}),
    ...(hash.pausedReason ? { pausedReason: hash.pausedReason } : {}),
    ...(hash.pausedKind ? { pausedKind: hash.pausedKind } : {}),
    ...(hash.cancelledBy ? { cancelledBy: hash.cancelledBy } : {}),
    ...(hash.retryOf ? { retryOf: hash.retryOf } : {}),
    ...(hash.previewAction
      ? {
          previewAction: hash.previewAction,
          previewCounts: Object.fromEntries(
            COUNT_NAMES.map((name) => [name, Number(hash[`p_${name}`] ?? 0)]),
          ) as RolloutCounts,
        }
      : {}),
  };
}
