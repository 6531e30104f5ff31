// Durable operations for every front (api, CLI, web UI): request one (allowed
// now, recorded, then enqueued; idempotency keys), read, list, cancel, follow
// and wait for it, read its logs. Workers execute them (operation-runner.ts).
import type { Redis } from 'ioredis';
import type { JsonValue } from '@switchyard/plugin-sdk/protocol';
import { appendAudit } from '../../access/index.js';
import { IdempotencyConflictError, InvalidInputError, NotFoundError } from '../../platform/index.js';
import {
  checkOperationTimeout,
  timeLimitsOf,
  type LogEntry,
  type PluginService,
} from '../../plugins/index.js';
import {
  ReplicaAcknowledger,
  nthNewest,
  resolveIdRef,
  type EventHub,
  type Keys,
  type Page,
  type Queues,
} from '../../redis/index.js';
import { OPERATE_ATTEMPTS, operateJobId, operateJobSchema } from './operate-job.js';
import { followOperation, type OperationFollowOptions } from './operation-follow.js';
import { announceOperationEnd } from './operation-notices.js';
import { operationActivityMessage, type OperationActivity } from './operation-messages.js';
import { OperationRunner } from './operation-runner.js';
import { workerLostOf } from './operation-liveness.js';
import { nextTurn, turnTaken } from './operation-turns.js';
import type { ProjectService } from '../../projects/index.js';
import type { Notices } from '../notify/index.js';
import {
  OperationStore,
  requestHash,
  toOperationView,
  type OperationQuery,
  type OperationRecord,
  type OperationView,
} from './operation-store.js';

export interface OperationRequest {
  pluginId: string;
  projectId: string;
  action: string;
  input: JsonValue;
  idempotencyKey?: string;
  /** May only shorten the plugin's operate limit (time-limits.ts). */
  timeoutMs?: number;
}

export interface OperationServiceDeps {
  redis: Redis;
  keys: Keys;
  plugins: PluginService;
  projects: ProjectService;
  queues: Queues;
  /** The process's shared pub/sub subscriber (the live followers'). */
  events: EventHub;
  /** Where an operation's end is told (webhooks): a queued one cancelled here never reaches a worker. */
  notices?: Notices;
}

export class OperationService {
  readonly store: OperationStore;
  /** Acknowledged operations must survive a failover: a replica confirms them first. */
  readonly #replicaAck = new ReplicaAcknowledger();

  constructor(private readonly deps: OperationServiceDeps) {
    this.store = new OperationStore(deps.redis, deps.keys);
  }

  /**
   * Accepts an operation only when plugin, grants and project trust allow it
   * now; writes the durable record, then enqueues. A known idempotency key
   * returns the existing operation when the request is the same (plugin,
   * project, action, input), and is refused with IdempotencyConflictError
   * when it is not.
   */
  async create(
    request: OperationRequest,
    actor: string,
  ): Promise<{ operation: OperationView; created: boolean }> {
    const { redis, keys, plugins } = this.deps;
    // PROTOCOL §7: project.operate's input is one JSON object ({} for none), as the original host sends it.
    if (typeof request.input !== 'object' || request.input === null || Array.isArray(request.input)) {
      throw new InvalidInputError('input must be one JSON object (the action input; {} for none)');
    }
    const hash = requestHash(request);
    if (request.idempotencyKey !== undefined) {
      validateIdempotencyKey(request.idempotencyKey);
      const existing = await this.store.byIdempotencyKey(request.idempotencyKey);
      if (existing) {
        const operation = this.#sameRequest(request, hash, existing);
        await this.#replicaAck.confirm(redis);
        return { operation, created: false };
      }
    }
    if (typeof request.action !== 'string' || request.action.trim() === '') {
      throw new InvalidInputError("action must be a non-empty string naming one of the plugin's actions");
    }
    const plugin = await plugins.authorize(request.pluginId, 'project.operate', 'project.operate');
    if (request.timeoutMs !== undefined)
      checkOperationTimeout(request.pluginId, timeLimitsOf(plugin.timeLimits), request.timeoutMs);
    await plugins.authorizeProject(request.projectId);
    const { operation, created } = await this.store.create({
      ...request,
      requestedBy: actor,
      requestHash: hash,
    });
    // Another request took the key meanwhile.
    if (!created) {
      const view = this.#sameRequest(request, hash, operation);
      await this.#replicaAck.confirm(redis);
      return { operation: view, created };
    }
    await this.#enqueue(operation.id, actor);
    await appendAudit(redis, keys, {
      actor,
      action: 'operation.request',
      target: operation.id,
      detail: { pluginId: request.pluginId, projectId: request.projectId, action: request.action },
    });
    // One WAIT after the last write covers the record, its job and its audit entry.
    await this.#replicaAck.confirm(redis);
    return { operation: toOperationView(operation), created };
  }

  /** The operate job, at its requester's turn among the queued operations (operation-turns.ts): fair between people. */
  async #enqueue(operationId: string, requester: string): Promise<void> {
    const { redis, keys, queues } = this.deps;
    const turn = await nextTurn(redis, keys, queues.operate, requester);
    await queues.operate.add('operate', operateJobSchema.parse({ operationId }), {
      jobId: operateJobId(operationId),
      priority: turn,
      attempts: OPERATE_ATTEMPTS,
      backoff: { type: 'exponential', delay: 500 },
    });
  }

  /**
   * A queued operation's job is added again when BullMQ does not hold it: after a crash between
   * the record and its job (a rollout's sweep), the job that was never added.
   */
  async ensureQueued(id: string): Promise<void> {
    const operation = await this.store.get(id);
    if (operation?.state !== 'queued') return;
    if (await this.deps.queues.operate.getJob(operateJobId(id))) return;
    await this.#enqueue(id, operation.requestedBy);
  }

  /** A worker took an operate job: the turn it carries (its BullMQ priority) is reached (operation-turns.ts). */
  async turnTaken(priority: number | undefined): Promise<void> {
    await turnTaken(this.deps.redis, this.deps.keys, priority);
  }

  /** The operation a key already names, if it was requested with this request; else a conflict. */
  #sameRequest(request: OperationRequest, hash: string, existing: OperationRecord): OperationView {
    // A record made before request hashes were kept: hash what it holds.
    if ((existing.requestHash ?? requestHash(existing)) !== hash)
      throw new IdempotencyConflictError(request.idempotencyKey ?? '', existing.id);
    return toOperationView(existing);
  }

  async get(id: string): Promise<OperationView> {
    const record = await this.store.get(id);
    if (!record)
      throw new NotFoundError(`unknown operation ${JSON.stringify(id)} (op list shows the known ones)`);
    const view = toOperationView(record);
    const workerLost = await workerLostOf(this.deps.redis, this.deps.keys, this.deps.queues.operate, view);
    return workerLost ? { ...view, workerLost } : view;
  }

  /** An operation id from what a person typed (id-refs.ts): whole, a unique prefix, or latest~N in a scope. */
  resolve(ref: string, scope: { pluginId?: string; projectId?: string } = {}): Promise<string> {
    const { pluginId, projectId } = scope;
    const scopeText = [pluginId && `of plugin ${pluginId}`, projectId && `on project ${projectId}`]
      .filter(Boolean)
      .join(' ');
    return resolveIdRef(this.deps.redis, ref, {
      kind: 'op_',
      index: this.deps.keys.operationsByTime,
      noun: 'operation',
      scopeText,
      newest: (skip) =>
        nthNewest(
          (cursor) =>
            this.store.list({
              limit: 100,
              ...(cursor ? { cursor } : {}),
              ...(pluginId ? { pluginId } : {}),
              ...(projectId ? { projectId } : {}),
            }),
          skip,
        ),
    });
  }

  /** The operation's redacted stderr (and how its call ended), oldest first. */
  async logs(id: string): Promise<LogEntry[]> {
    await this.get(id);
    return this.deps.plugins.operationLogs(id);
  }

  /** Newest first, filtered, one page (`nextCursor` continues). */
  async list(query: OperationQuery = {}): Promise<Page<OperationView>> {
    const page = await this.store.list(query);
    return { ...page, items: page.items.map(toOperationView) };
  }

  /**
   * Cancels from any process: a queued operation never starts; a running one
   * is killed by the worker holding it. Harmless when repeated; a finished
   * operation is left as it is. Every request is audited.
   */
  async cancel(id: string, actor: string): Promise<OperationView> {
    const { outcome, state } = await this.store.requestCancel(id, actor);
    if (outcome === 'missing')
      throw new NotFoundError(`unknown operation ${JSON.stringify(id)} (op list shows the known ones)`);
    if (outcome === 'cancelled') await this.deps.queues.operate.remove(operateJobId(id)).catch(() => 0);
    await appendAudit(this.deps.redis, this.deps.keys, {
      actor,
      action: 'operation.cancel',
      target: id,
      detail: { outcome, stateBefore: state },
    });
    if (outcome === 'cancelled' && this.deps.notices)
      await announceOperationEnd(this.store, this.deps.notices, id);
    return this.get(id);
  }

  /**
   * The lifecycle runner a worker hands its operate jobs to (operation-runner.ts):
   * each call's start and end is published (operation priority, on every
   * worker), and each operation it ends is announced (webhooks). `onError`
   * hears a publication that failed (the run goes on).
   */
  runner(options: {
    identity: string;
    projectLockMs: number;
    onError: (event: 'publish-failed' | 'notify-failed', error: Error) => void;
    /** Told after the runner may have ended an operation (a rollout advances). */
    onFinished?: (operationId: string) => void;
  }): OperationRunner {
    const { redis, keys, plugins, projects, notices } = this.deps;
    const announce = (activity: OperationActivity) =>
      void redis
        .publish(keys.operationActivityChannel, operationActivityMessage.encode(activity))
        .catch((error: Error) => options.onError('publish-failed', error));
    return new OperationRunner(redis, keys, plugins, projects, this.store, {
      identity: options.identity,
      projectLockMs: options.projectLockMs,
      onStarted: (operationId) => announce({ kind: 'started', operationId }),
      onEnded: (operationId) => announce({ kind: 'ended', operationId }),
      onFinished: (operationId) => {
        options.onFinished?.(operationId);
        if (notices)
          void announceOperationEnd(this.store, notices, operationId).catch((error: Error) =>
            options.onError('notify-failed', error),
          );
      },
    });
  }

  /**
   * Calls onState at once and on each state change (published by the
   * operation's scripts; operation-follow.ts); resolves with the terminal view,
   * or the latest one when the signal aborts first.
   */
  follow(
    id: string,
    onState: (operation: OperationView) => void,
    options: OperationFollowOptions = {},
  ): Promise<OperationView> {
    return followOperation(
      { store: this.store, events: this.deps.events, get: (operationId) => this.get(operationId) },
      id,
      onState,
      options,
    );
  }

  /**
   * Resolves when the operation is terminal (or the signal aborts) with its
   * view; hears the end over pub/sub, re-reading every `pollMs` (default 5 s)
   * only in case a message was lost.
   */
  wait(id: string, options: { pollMs?: number; signal?: AbortSignal } = {}): Promise<OperationView> {
    return this.follow(id, () => {}, { signal: options.signal, fallbackReadMs: options.pollMs });
  }

  /** How many workers consume the operate queue now (0: queued work would wait forever). */
  workersConsuming(): Promise<number> {
    return this.deps.queues.operate.getWorkersCount();
  }
}

function validateIdempotencyKey(key: string): void {
  if (key.length === 0 || key.length > 200 || /[\s\0]/.test(key)) {
    throw new InvalidInputError('idempotency key must be 1–200 characters without whitespace');
  }
}
