// The front's work services: batches of inspections and durable operations.
// The api, the CLI and the web UI all enqueue through these; workers execute.
import { ReplicaAcknowledger } from './replica-ack.js';
import type { Redis } from 'ioredis';
import type { JsonValue } from '@switchyard/plugin-sdk/protocol';
import { appendAudit } from './audit.js';
import { inOrder } from './concurrency.js';
import { BatchControl } from './batch-control.js';
import type { EventHub } from './event-hub.js';
import { BatchStore, isBatchOver, type BatchProgress, type BatchQuery, type BatchView } from './batches.js';
import { IdempotencyConflictError, InvalidInputError, NotFoundError } from './errors.js';
import {
  INSPECT_ATTEMPTS,
  INSPECT_BACKOFF_MS,
  OPERATE_ATTEMPTS,
  inspectJobSchema,
  operateJobSchema,
  projectsPerJob,
  type Queues,
} from './jobs.js';
import type { Keys } from './keys.js';
import {
  OperationStore,
  requestHash,
  toOperationView,
  type OperationQuery,
  type OperationRecord,
  type OperationView,
} from './operations.js';
import type { Page } from './pages.js';
import type { PluginService } from './plugins.js';
import type { ProjectService } from './projects.js';
import { sleepUntilWoken } from './sleep.js';
import { checkOperationTimeout, timeLimitsOf } from './time-limits.js';
import { followOperation, type OperationFollowOptions } from './operation-follow.js';
import type { LogEntry } from './plugin-store.js';

/** addBulk chunk: one round trip per this many jobs, not one per job. */
export const ENQUEUE_CHUNK = 1_000;

export type ProjectSelection = string[] | 'all';

export interface OperationRequest {
  pluginId: string;
  projectId: string;
  action: string;
  input: JsonValue;
  idempotencyKey?: string;
  /** May only shorten the plugin's operate limit (time-limits.ts). */
  timeoutMs?: number;
}

export class WorkService {
  readonly batches: BatchStore;
  readonly operations: OperationStore;
  /** Cancel, retry, diff, export (batch-control.ts). */
  readonly control: BatchControl;

  constructor(
    readonly redis: Redis,
    readonly keys: Keys,
    readonly plugins: PluginService,
    readonly projects: ProjectService,
    readonly queues: Queues,
    /** The process's shared pub/sub subscriber (the live followers'). */
    readonly events: EventHub,
  ) {
    this.batches = new BatchStore(redis, keys);
    this.operations = new OperationStore(redis, keys);
    this.control = new BatchControl(this);
  }

  /** Acknowledged operations must survive a failover: a replica confirms them first. */
  readonly #replicaAck = new ReplicaAcknowledger();

  // ---- batches ------------------------------------------------------------------

  /** Validates now, records the batch, enqueues one job per project in chunks; returns at once. */
  async createBatch(
    pluginId: string,
    selection: ProjectSelection,
    actor: string,
    options: { retryOf?: string } = {},
  ): Promise<BatchView> {
    const [, projectIds] = await inOrder(
      this.plugins.authorize(pluginId, 'project.inspect', 'project.metadata.read'),
      this.#resolveProjects(selection),
    );
    const batch = await this.batches.create(
      pluginId,
      projectIds,
      actor,
      {
        actor,
        action: 'batch.create',
        target: '',
        detail: { pluginId, total: projectIds.length, ...options },
      },
      options,
    );
    const perJob = projectsPerJob(projectIds.length);
    const jobs = [];
    for (let start = 0; start < projectIds.length; start += perJob) {
      jobs.push({
        name: 'inspect',
        data: inspectJobSchema.parse({
          batchId: batch.batchId,
          pluginId,
          projectIds: projectIds.slice(start, start + perJob),
        }),
        opts: {
          jobId: `${batch.batchId}.${start / perJob}`,
          attempts: INSPECT_ATTEMPTS,
          backoff: { type: 'exponential' as const, delay: INSPECT_BACKOFF_MS },
        },
      });
    }
    for (let start = 0; start < jobs.length; start += ENQUEUE_CHUNK) {
      await this.queues.inspect.addBulk(jobs.slice(start, start + ENQUEUE_CHUNK));
    }
    return batch;
  }

  async getBatch(batchId: string): Promise<BatchView> {
    const batch = await this.batches.get(batchId);
    if (!batch)
      throw new NotFoundError(`unknown batch ${JSON.stringify(batchId)} (batch list shows the known ones)`);
    return batch;
  }

  /** Newest first, filtered, one page (`nextCursor` continues). */
  listBatches(query: BatchQuery = {}) {
    return this.batches.list(query);
  }

  /**
   * Follows a batch to its end, calling onProgress for each recorded project
   * (live, over pub/sub) and polling as a fallback for anything missed.
   */
  async followBatch(
    batchId: string,
    onProgress: (progress: BatchProgress | BatchView) => void,
    options: { pollMs?: number; signal?: AbortSignal } = {},
  ): Promise<BatchView> {
    let wake = () => {};
    const unsubscribe = await this.events.subscribe(this.batches.eventsChannel(batchId), {
      onMessage: (message) => onProgress({ batchId, ...JSON.parse(message) }),
      // Messages were lost while the subscriber reconnected: poll at once.
      onResync: () => wake(),
    });
    try {
      for (;;) {
        const batch = await this.getBatch(batchId);
        if (isBatchOver(batch)) return batch;
        if (options.signal?.aborted) return batch;
        onProgress(batch);
        await sleepUntilWoken(options.pollMs ?? 1_000, undefined, (resolve) => (wake = resolve));
      }
    } finally {
      unsubscribe();
    }
  }

  async #resolveProjects(selection: ProjectSelection): Promise<string[]> {
    if (selection === 'all')
      return (await this.projects.list()).filter((project) => project.trusted).map((project) => project.id);
    if (selection.length === 0) throw new InvalidInputError('name at least one project, or use --all');
    const unique = [...new Set(selection)];
    const found = await this.projects.getMany(unique);
    const unknown = unique.filter((_id, index) => found[index] === undefined);
    if (unknown.length > 0) {
      throw new NotFoundError(
        `unknown project${unknown.length > 1 ? 's' : ''} ${unknown.map((id) => JSON.stringify(id)).join(', ')} (project list shows the known ones)`,
      );
    }
    return unique;
  }

  // ---- operations ---------------------------------------------------------------

  /**
   * Accepts an operation only when plugin, grants and project trust allow it
   * now; writes the durable record, then enqueues. A known idempotency key
   * returns the existing operation when the request is the same (plugin,
   * project, action, input), and is refused with IdempotencyConflictError
   * when it is not.
   */
  async createOperation(
    request: OperationRequest,
    actor: string,
  ): Promise<{ operation: OperationView; created: boolean }> {
    const hash = requestHash(request);
    if (request.idempotencyKey !== undefined) {
      validateIdempotencyKey(request.idempotencyKey);
      const existing = await this.operations.byIdempotencyKey(request.idempotencyKey);
      if (existing) {
        const operation = this.#sameRequest(request, hash, existing);
        await this.#replicaAck.confirm(this.redis);
        return { operation, created: false };
      }
    }
    if (typeof request.action !== 'string' || request.action.trim() === '') {
      throw new InvalidInputError("action must be a non-empty string naming one of the plugin's actions");
    }
    const plugin = await this.plugins.authorize(request.pluginId, 'project.operate', 'project.operate');
    if (request.timeoutMs !== undefined)
      checkOperationTimeout(request.pluginId, timeLimitsOf(plugin.timeLimits), request.timeoutMs);
    await this.plugins.authorizeProject(request.projectId);
    const { operation, created } = await this.operations.create({
      ...request,
      requestedBy: actor,
      requestHash: hash,
    });
    // Another request took the key meanwhile.
    if (!created) {
      const view = this.#sameRequest(request, hash, operation);
      await this.#replicaAck.confirm(this.redis);
      return { operation: view, created };
    }
    await this.queues.operate.add('operate', operateJobSchema.parse({ operationId: operation.id }), {
      jobId: operation.id,
      attempts: OPERATE_ATTEMPTS,
      backoff: { type: 'exponential', delay: 500 },
    });
    await appendAudit(this.redis, this.keys, {
      actor,
      action: 'operation.request',
      target: operation.id,
      detail: { pluginId: request.pluginId, projectId: request.projectId, action: request.action },
    });
    // One WAIT after the last write covers the record, its job and its audit entry.
    await this.#replicaAck.confirm(this.redis);
    return { operation: toOperationView(operation), created };
  }

  /** The operation a key already names, if it was requested with this request; else a conflict. */
  #sameRequest(request: OperationRequest, hash: string, existing: OperationRecord): OperationView {
    // A record made before request hashes were kept: hash what it holds.
    if ((existing.requestHash ?? requestHash(existing)) !== hash)
      throw new IdempotencyConflictError(request.idempotencyKey ?? '', existing.id);
    return toOperationView(existing);
  }

  async getOperation(id: string): Promise<OperationView> {
    const record = await this.operations.get(id);
    if (!record)
      throw new NotFoundError(`unknown operation ${JSON.stringify(id)} (op list shows the known ones)`);
    return toOperationView(record);
  }

  /** The operation's redacted stderr (and how its call ended), oldest first. */
  async operationLogs(id: string): Promise<LogEntry[]> {
    await this.getOperation(id);
    return this.plugins.operationLogs(id);
  }

  /** Newest first, filtered, one page (`nextCursor` continues). */
  async listOperations(query: OperationQuery = {}): Promise<Page<OperationView>> {
    const page = await this.operations.list(query);
    return { ...page, items: page.items.map(toOperationView) };
  }

  /**
   * Cancels from any process: a queued operation never starts; a running one
   * is killed by the worker holding it. Harmless when repeated; a finished
   * operation is left as it is. Every request is audited.
   */
  async cancelOperation(id: string, actor: string): Promise<OperationView> {
    const { outcome, state } = await this.operations.requestCancel(id);
    if (outcome === 'missing')
      throw new NotFoundError(`unknown operation ${JSON.stringify(id)} (op list shows the known ones)`);
    if (outcome === 'cancelled') await this.queues.operate.remove(id).catch(() => 0);
    await appendAudit(this.redis, this.keys, {
      actor,
      action: 'operation.cancel',
      target: id,
      detail: { outcome, stateBefore: state },
    });
    return this.getOperation(id);
  }

  /**
   * Calls onState at once and on each state change (published by the
   * operation's scripts; operation-follow.ts); resolves with the terminal view,
   * or the latest one when the signal aborts first.
   */
  followOperation(
    id: string,
    onState: (operation: OperationView) => void,
    options: OperationFollowOptions = {},
  ): Promise<OperationView> {
    return followOperation(this, id, onState, options);
  }

  /**
   * Resolves when the operation is terminal (or the signal aborts) with its
   * view; hears the end over pub/sub, re-reading every `pollMs` (default 5 s)
   * only in case a message was lost.
   */
  async waitOperation(
    id: string,
    options: { pollMs?: number; signal?: AbortSignal } = {},
  ): Promise<OperationView> {
    return this.followOperation(id, () => {}, {
      ...(options.signal ? { signal: options.signal } : {}),
      ...(options.pollMs !== undefined ? { fallbackReadMs: options.pollMs } : {}),
    });
  }

  /** How many workers consume a queue now (0: queued work would wait forever). */
  async workersConsuming(queue: keyof Omit<Queues, 'close'>): Promise<number> {
    return this.queues[queue].getWorkersCount();
  }
}

function validateIdempotencyKey(key: string): void {
  if (key.length === 0 || key.length > 200 || /[\s\0]/.test(key)) {
    throw new InvalidInputError('idempotency key must be 1–200 characters without whitespace');
  }
}
