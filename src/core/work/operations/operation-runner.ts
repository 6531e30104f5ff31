// The operation lifecycle (docs/ARCHITECTURE.md "Operation lifecycle") as a core
// service: project lock, the at-most-once dispatch mark, the end states
// (succeeded…, failed, cancelled, OUTCOME_UNKNOWN) and their audit entries,
// cancellation of a running call and the end of a job whose workers died.
// The dispatch mark: docs/adr/0001-at-most-once-dispatch-mark.md.
// The queue shell only hands jobs in and maps the answer to its own terms.
import type { Redis } from 'ioredis';
import { appendAudit } from '../../access/index.js';
import {
  ABORT_REASONS,
  ERROR_CODES,
  SwitchyardError,
  abortReasonOf,
  errorCode,
  FinalJobError,
  messageOf,
} from '../../platform/index.js';
import type { DispatchOutcome, Keys } from '../../redis/index.js';
import { isTerminal, type OperationRecord, type OperationStore } from './operation-store.js';
import type { PluginService } from '../../plugins/index.js';
import { ProjectLock, type ProjectService } from '../../projects/index.js';
import { boundedMessage } from '../../safety/index.js';

/** Why a running operation's call was aborted when its cancel was heard (beside the shell's ABORT_REASONS). */
export const OPERATION_CANCELLED = 'cancelled';

export interface OperationRunnerOptions {
  /** Who runs the operations (`worker:<host>:<pid>`), in records and audit. */
  identity: string;
  /** Project lock expiry; renewed while the operation runs. */
  projectLockMs: number;
  /** Told when an operation's call starts and ends (operation priority). */
  onStarted?: (operationId: string) => void;
  onEnded?: (operationId: string) => void;
  /** Told after this runner may have ended an operation's record, however (the operation.finished notice). */
  onFinished?: (operationId: string) => void;
}

export interface OperationAttempt {
  /** Attempts of the job made before this one, and how many it may have. */
  attemptsMade: number;
  attempts: number;
  /** Aborts on worker shutdown, or with ABORT_REASONS.lockLost when the job's lock is about to lapse. */
  signal?: AbortSignal | undefined;
}

/** `busy`: another operation holds the project; try the job again later without using an attempt. */
export type OperationJobOutcome = { state: string } | 'busy';

class DispatchRefused extends Error {
  constructor(readonly reason: Exclude<DispatchOutcome, 'ok'>) {
    super(`operation not dispatched: ${reason}`);
  }
}

export class OperationRunner {
  readonly #running = new Map<string, AbortController>();

  constructor(
    private readonly redis: Redis,
    private readonly keys: Keys,
    private readonly plugins: PluginService,
    private readonly projects: ProjectService,
    private readonly operations: OperationStore,
    private readonly options: OperationRunnerOptions,
  ) {}

  /** How many operations this runner is running now. */
  get running(): number {
    return this.#running.size;
  }

  /** A cancel heard from any process: the call of this operation, if it runs here, is killed. */
  cancel(operationId: string): void {
    this.#running.get(operationId)?.abort(OPERATION_CANCELLED);
  }

  /** Stops every running call (shutdown past its deadline). */
  abortAll(reason: typeof ABORT_REASONS.shutdown): void {
    for (const controller of this.#running.values()) controller.abort(reason);
  }

  /**
   * Runs one operation job. Resolves with the state it left the record in, or
   * 'busy'; throws FinalJobError when it ended the operation failed, any other
   * error when a retry is safe (nothing was dispatched).
   */
  async run(operationId: string, attempt: OperationAttempt): Promise<OperationJobOutcome> {
    const operation = await this.operations.get(operationId);
    if (!operation) throw new FinalJobError(`operation ${operationId} does not exist`);
    if (isTerminal(operation.state)) return { state: operation.state };
    if (operation.state === 'running' && operation.dispatched) {
      const ended = await this.#endOutcomeUnknown(operation);
      this.options.onFinished?.(operation.id);
      return ended;
    }

    const controller = new AbortController();
    const lockName = await this.#lockName(operation.projectId);
    const lock = await ProjectLock.acquire(this.redis, this.keys, lockName, operation.id, {
      ttlMs: this.options.projectLockMs,
      onLost: () => controller.abort(ABORT_REASONS.lockLost),
    });
    if (!lock) return 'busy';
    const onShutdown = () =>
      controller.abort(
        abortReasonOf(attempt.signal) === ABORT_REASONS.lockLost
          ? ABORT_REASONS.lockLost
          : ABORT_REASONS.shutdown,
      );
    attempt.signal?.addEventListener('abort', onShutdown, { once: true });
    this.#running.set(operation.id, controller);
    this.options.onStarted?.(operation.id);
    try {
      return await this.#runLocked(operation, lock, lockName, controller, attempt);
    } finally {
      this.#running.delete(operation.id);
      this.options.onEnded?.(operation.id);
      this.options.onFinished?.(operation.id);
      attempt.signal?.removeEventListener('abort', onShutdown);
      await lock.release();
    }
  }

  /** A job whose workers died `maxStalls + 1` times: its operation still has to end. */
  async endStalled(operationId: string, maxStalls: number): Promise<void> {
    const operation = await this.operations.get(operationId);
    if (!operation || isTerminal(operation.state)) return;
    try {
      if (operation.dispatched) return void (await this.#endOutcomeUnknown(operation));
      await this.#releaseHeldBy(operation);
      await this.#endFailed(
        operation,
        ERROR_CODES.WORKER_LOST,
        `the workers running this operation died ${maxStalls + 1} times before it was sent to the plugin; nothing was run`,
      );
    } finally {
      this.options.onFinished?.(operation.id);
    }
  }

  /** The lock of the project's directory (lockNameOf: one for every id over it); of its id when the project is gone (its call fails then). */
  async #lockName(projectId: string): Promise<string> {
    const project = await this.projects.get(projectId);
    return project ? this.projects.lockNameOf(project) : `id:${projectId}`;
  }

  async #releaseHeldBy(operation: OperationRecord): Promise<void> {
    const name = await this.#lockName(operation.projectId);
    await ProjectLock.releaseHeldBy(this.redis, this.keys, name, operation.id);
  }

  async #runLocked(
    operation: OperationRecord,
    lock: ProjectLock,
    lockName: string,
    controller: AbortController,
    attempt: OperationAttempt,
  ): Promise<{ state: string }> {
    const { identity } = this.options;
    const started = await this.operations.transition(
      operation.id,
      ['queued', 'running'],
      'running',
      { startedAt: new Date().toISOString(), worker: identity },
      { refuseIfCancelRequested: true },
    );
    if (started.outcome === 'cancel-requested')
      return this.#endCancelled(operation.id, 'cancelled before it started');
    if (started.outcome !== 'ok') return { state: started.previous };
    // A cancel published before we registered is visible in the record.
    if ((await this.operations.get(operation.id))?.cancelRequested) controller.abort(OPERATION_CANCELLED);

    try {
      const result = await this.plugins.operate(
        operation.pluginId,
        operation.projectId,
        operation.action,
        operation.input,
        {
          signal: controller.signal,
          operationId: operation.id,
          ...(operation.timeoutMs ? { timeoutMs: operation.timeoutMs } : {}),
          // A call held back by the plugin's caps stays running, marked waiting with why.
          onWaiting: (reason) => void this.operations.noteWaiting(operation.id, reason).catch(() => {}),
          onAdmitted: () => void this.operations.noteWaiting(operation.id, undefined).catch(() => {}),
          beforeSend: async () => {
            const marked = await this.operations.markDispatched(operation.id, lockName, lock.token, identity);
            if (marked !== 'ok') throw new DispatchRefused(marked);
          },
        },
      );
      await this.operations.transition(operation.id, ['running'], result.status, {
        result: JSON.stringify(result),
        ...(result.status === 'failed'
          ? { errorCode: ERROR_CODES.PLUGIN_REPORTED_FAILURE, errorMessage: boundedMessage(result.summary) }
          : {}),
      });
      await this.#auditFinished(operation, result.status);
      return { state: result.status };
    } catch (error) {
      return this.#afterFailedCall(operation, controller, attempt, error);
    }
  }

  async #afterFailedCall(
    operation: OperationRecord,
    controller: AbortController,
    attempt: OperationAttempt,
    error: unknown,
  ): Promise<{ state: string }> {
    const reason = abortReasonOf(controller.signal);
    if (
      reason === OPERATION_CANCELLED ||
      (error instanceof DispatchRefused && error.reason === 'cancel-requested')
    ) {
      return this.#endCancelled(operation.id, 'cancelled while running; the plugin process group was killed');
    }
    if (error instanceof DispatchRefused) {
      // Nothing was sent to the plugin. Lost the project lock: try again later.
      if (error.reason === 'lock-not-held')
        throw new Error('lost the project lock before dispatch; the operation will be retried');
      // Someone else finished or runs it: leave the record as it is.
      return { state: (await this.operations.get(operation.id))?.state ?? 'unknown' };
    }
    const latest = await this.operations.get(operation.id);
    const dispatched = latest?.dispatched === true;
    const stopped = reason === ABORT_REASONS.shutdown || reason === ABORT_REASONS.lockLost;
    if (stopped && !dispatched) {
      throw new Error(`the call was stopped (${reason}) before dispatch; the operation will be retried`);
    }
    if (stopped) {
      return this.#endFailed(
        operation,
        ERROR_CODES.OUTCOME_UNKNOWN,
        `the worker stopped the call (${reason}) after project.operate was sent; the plugin may have acted — check the project before running it again`,
      );
    }
    // Before dispatch a retry is safe: for a transient plugin fault, or an outage of Redis itself.
    const retryable = error instanceof SwitchyardError ? error.transient : true;
    if (!dispatched && retryable && attempt.attemptsMade + 1 < attempt.attempts) throw error;
    const message = boundedMessage(messageOf(error));
    await this.#endFailed(operation, errorCode(error), message);
    // BullMQ stores the reason with the job: redacted too.
    throw new FinalJobError(message);
  }

  async #endOutcomeUnknown(operation: OperationRecord): Promise<{ state: string }> {
    // The dead worker's project lock would block the project until it expires.
    await this.#releaseHeldBy(operation);
    return this.#endFailed(
      operation,
      ERROR_CODES.OUTCOME_UNKNOWN,
      `the worker running this operation (${operation.dispatchedBy ?? 'unknown'}) stopped after project.operate was sent; the plugin may have acted — check the project before running it again`,
    );
  }

  async #endFailed(operation: OperationRecord, code: string, message: string): Promise<{ state: string }> {
    await this.operations.transition(operation.id, ['queued', 'running'], 'failed', {
      errorCode: code,
      errorMessage: message,
    });
    await this.#auditFinished(operation, 'failed', code);
    return { state: 'failed' };
  }

  async #endCancelled(id: string, message: string): Promise<{ state: string }> {
    await this.operations.transition(id, ['queued', 'running'], 'cancelled', {
      errorCode: ERROR_CODES.CANCELLED,
      errorMessage: message,
    });
    await appendAudit(this.redis, this.keys, {
      actor: this.options.identity,
      action: 'operation.cancelled',
      target: id,
      detail: {},
    });
    return { state: 'cancelled' };
  }

  async #auditFinished(operation: OperationRecord, state: string, code?: string): Promise<void> {
    await appendAudit(this.redis, this.keys, {
      actor: this.options.identity,
      action: 'operation.finished',
      target: operation.id,
      detail: {
        state,
        ...(code ? { errorCode: code } : {}),
        pluginId: operation.pluginId,
        projectId: operation.projectId,
      },
    });
  }
}
