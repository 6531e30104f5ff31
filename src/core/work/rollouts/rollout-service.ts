// Rollouts for every front (docs/ARCHITECTURE.md "Rollouts"): one action of
// one plugin, with one input, over a selection of projects fixed at creation,
// each project an ordinary durable operation, started in waves within a
// failure budget, after an approval when the action may change anything.
// What drives a rollout: `advance` (after creation, approval, resume),
// `operationEnded` (the worker that ended one of its operations) and `sweep`
// (a timer in every worker), each an idempotent step (rollout-step.lua) that
// records and claims atomically; a claimed project's operation is created
// with an idempotency key of the rollout and the project, so whichever
// process repeats a step after a crash, no project runs twice.
import type { JsonValue } from '@switchyard/plugin-sdk/protocol';
import { appendAudit } from '../../access/index.js';
import {
  ConflictError,
  ERROR_CODES,
  InvalidInputError,
  NotFoundError,
  NotPermittedError,
  SwitchyardError,
  errorCode,
  messageOf,
  readEnv,
} from '../../platform/index.js';
import type { PluginService } from '../../plugins/index.js';
import type { ProjectService } from '../../projects/index.js';
import {
  decodeCursor,
  encodeCursor,
  nthNewest,
  pageLimit,
  resolveIdRef,
  type Keys,
  type Page,
} from '../../redis/index.js';
import { redactDeep } from '../../safety/index.js';
import type { BatchService } from '../batches/index.js';
import type { Notices } from '../notify/index.js';
import { isTerminal, type OperationService, type OperationView } from '../operations/index.js';
import {
  DEFAULT_CONCURRENCY,
  DEFAULT_MAX_FAILURES,
  DEFAULT_WAVES,
  checkConcurrency,
  maxFailuresOf,
  waveEnds,
  waveOf,
} from './rollout-plan.js';
import { rolloutExport, type RolloutExportFormat } from './rollout-export.js';
import { selectProjects, type RolloutSelection } from './rollout-selection.js';
import {
  RolloutStore,
  isRolloutOver,
  type RolloutProjectEnd,
  type RolloutProjectState,
  type RolloutQuery,
  type RolloutRecord,
  type RolloutState,
} from './rollout-store.js';
import type { Redis } from 'ioredis';

export interface RolloutRequest {
  pluginId: string;
  action: string;
  input?: JsonValue;
  name?: string;
  selection: RolloutSelection;
  /** Cumulative figures of the selection (DEFAULT_WAVES). */
  waves?: string;
  concurrency?: number;
  /** `N` or `P%` (DEFAULT_MAX_FAILURES). */
  maxFailures?: string;
  pauseBetween?: boolean;
  /** The rollout this one retries (`rollout retry --failed`). */
  retryOf?: string;
}

/** docs/CLI.md's JSON shape of a rollout. */
export interface RolloutView {
  id: string;
  name: string;
  pluginId: string;
  action: string;
  input: JsonValue;
  state: RolloutState;
  risk: string;
  createdBy: string;
  approvedBy?: string;
  total: number;
  skipped: { projectId: string; reason: string }[];
  waves: { index: number; size: number; state: 'pending' | 'running' | 'paused' | 'done' | 'cancelled' }[];
  counts: RolloutRecord['counts'];
  maxFailures: number;
  concurrency: number;
  pauseBetween: boolean;
  selection: string[];
  createdAt: string;
  startedAt?: string;
  finishedAt?: string;
  pausedReason?: string;
  cancelledBy?: string;
  retryOf?: string;
}

export interface RolloutProjectView {
  projectId: string;
  /** The wave it belongs to (from 1). */
  wave: number;
  operationId?: string;
  state: RolloutProjectState;
  errorCode?: string;
  errorMessage?: string;
}

export interface RolloutServiceDeps {
  redis: Redis;
  keys: Keys;
  plugins: PluginService;
  projects: ProjectService;
  batches: BatchService;
  operations: OperationService;
  notices?: Notices;
}

const NAME = /^[\p{L}\p{N} ._:/-]{1,100}$/u;
/** docs/ENVIRONMENT.md: a one-admin installation may approve its own rollouts. */
function selfApprovalAllowed(): boolean {
  return readEnv('SWITCHYARD_ROLLOUT_SELF_APPROVAL') === '1';
}

export class RolloutService {
  readonly store: RolloutStore;

  constructor(private readonly deps: RolloutServiceDeps) {
    this.store = new RolloutStore(deps.redis, deps.keys);
  }

  /**
   * Fixes the selection and the plan; an action of risk `none` starts at
   * once, any other waits in `awaiting-approval` for an admin.
   */
  async create(request: RolloutRequest, actor: string): Promise<RolloutView> {
    const { plugins, projects, batches } = this.deps;
    const input = request.input ?? {};
    if (typeof input !== 'object' || input === null || Array.isArray(input))
      throw new InvalidInputError('input must be one JSON object (the action input; {} for none)');
    if (typeof request.action !== 'string' || request.action.trim() === '')
      throw new InvalidInputError("action must be a non-empty string naming one of the plugin's actions");
    if (request.name !== undefined && !NAME.test(request.name))
      throw new InvalidInputError('--name must be 1–100 letters, digits, spaces or . _ : / -');
    await plugins.authorize(request.pluginId, 'project.operate', 'project.operate');
    const concurrency = checkConcurrency(request.concurrency ?? DEFAULT_CONCURRENCY);
    const selected = await selectProjects(
      { projects, batches },
      request.pluginId,
      request.action,
      request.selection,
    );
    const total = selected.projectIds.length;
    if (total === 0)
      throw new InvalidInputError(
        `the selection (${selected.described.join(' ')}) holds no project to run on${selected.skipped.length > 0 ? `; skipped: ${selected.skipped.map((entry) => `${entry.projectId} (${entry.reason})`).join(', ')}` : ''}`,
      );
    const ends = waveEnds(request.waves ?? DEFAULT_WAVES, total);
    const maxFailures = maxFailuresOf(request.maxFailures ?? DEFAULT_MAX_FAILURES, total);
    const record = await this.store.create(
      {
        name: request.name ?? `${request.action} on ${total} project${total === 1 ? '' : 's'}`,
        pluginId: request.pluginId,
        action: request.action,
        input,
        state: selected.risk === 'none' ? 'running' : 'awaiting-approval',
        risk: selected.risk,
        createdBy: actor,
        total,
        skipped: selected.skipped,
        waveEnds: ends,
        concurrency,
        maxFailures,
        pauseBetween: request.pauseBetween === true,
        selection: selected.described,
        ...(request.retryOf ? { retryOf: request.retryOf } : {}),
      },
      selected.projectIds,
    );
    await this.#audit(actor, 'rollout.create', record.id, {
      pluginId: record.pluginId,
      action: record.action,
      total,
      skipped: selected.skipped.length,
      risk: record.risk,
    });
    if (record.state === 'awaiting-approval') await this.#announcePending(record.id);
    else await this.advance(record.id);
    return this.get(record.id);
  }

  async get(id: string): Promise<RolloutView> {
    return toRolloutView(await this.#record(id));
  }

  /** Newest first, filtered, one page. */
  async list(query: RolloutQuery = {}): Promise<Page<RolloutView>> {
    const page = await this.store.list(query);
    return { ...page, items: page.items.map(toRolloutView) };
  }

  /** The rollout's projects in wave order, with how each one's operation ended; one page. */
  async projects(
    id: string,
    query: { state?: RolloutProjectState; limit?: number; cursor?: string } = {},
  ): Promise<Page<RolloutProjectView>> {
    const record = await this.#record(id);
    const all = (await this.store.projects(id)).map((project, index) => ({
      ...project,
      wave: waveOf(record.waveEnds, index) + 1,
    }));
    const matching = query.state ? all.filter((project) => project.state === query.state) : all;
    const start = query.cursor ? decodeCursor(query.cursor, isOffset).o : 0;
    const limit = pageLimit(query.limit);
    const slice = matching.slice(start, start + limit);
    const operations = await Promise.all(
      slice.map((project) => (project.operationId ? this.#operation(project.operationId) : undefined)),
    );
    const errors = await this.store.errors(
      id,
      slice.map((project) => project.projectId),
    );
    const items = slice.map((project, index) => {
      const operation = operations[index];
      const error = errors[index];
      const code = operation?.errorCode ?? error?.errorCode;
      const message = operation?.errorMessage ?? error?.errorMessage;
      return {
        ...project,
        ...(code ? { errorCode: code } : {}),
        ...(message ? { errorMessage: message } : {}),
      };
    });
    return {
      items,
      ...(start + limit < matching.length ? { nextCursor: encodeCursor({ o: start + limit }) } : {}),
    };
  }

  /**
   * A new rollout of this one's failed projects (not its OUTCOME_UNKNOWN ones: the plugin may have
   * acted there, so a person looks first), with the same action, input, concurrency and budget.
   */
  async retry(id: string, actor: string): Promise<RolloutView> {
    const record = await this.#record(id);
    const failed = (await this.store.projects(id))
      .filter((project) => project.state === 'failed')
      .map((project) => project.projectId);
    if (failed.length === 0)
      throw new InvalidInputError(
        `rollout ${id} has no failed project to retry (OUTCOME_UNKNOWN ones are never retried: check them, then name them in a new rollout)`,
      );
    return this.create(
      {
        pluginId: record.pluginId,
        action: record.action,
        input: record.input,
        name: `retry of ${record.name}`.replace(/[^\p{L}\p{N} ._:/-]/gu, '-').slice(0, 100),
        selection: { projects: failed },
        concurrency: record.concurrency,
        maxFailures: String(record.maxFailures),
        pauseBetween: record.pauseBetween,
        retryOf: id,
      },
      actor,
    );
  }

  /** Every project with its wave, state, operation and error, as JSON lines or CSV. */
  async export(id: string, format: RolloutExportFormat): Promise<string> {
    const projects: RolloutProjectView[] = [];
    let cursor: string | undefined;
    do {
      const page = await this.projects(id, { limit: 500, ...(cursor ? { cursor } : {}) });
      projects.push(...page.items);
      cursor = page.nextCursor;
    } while (cursor);
    return rolloutExport(id, projects, format);
  }

  /** A rollout id from what a person typed: whole, a unique prefix, or latest~N (of a plugin). */
  resolve(ref: string, scope: { pluginId?: string } = {}): Promise<string> {
    const { pluginId } = scope;
    return resolveIdRef(this.deps.redis, ref, {
      kind: 'rollout_',
      index: this.deps.keys.rolloutsByTime,
      noun: 'rollout',
      scopeText: pluginId ? `of plugin ${pluginId}` : '',
      newest: (skip) =>
        nthNewest(
          (cursor) =>
            this.store.list({ limit: 100, ...(cursor ? { cursor } : {}), ...(pluginId ? { pluginId } : {}) }),
          skip,
        ),
    });
  }

  /** An admin other than the creator starts a rollout that waits for approval (self-approval: a host setting). */
  async approve(id: string, actor: string): Promise<RolloutView> {
    const record = await this.#record(id);
    if (record.state !== 'awaiting-approval')
      throw new ConflictError(
        `rollout ${id} is ${record.state}, not awaiting-approval: there is nothing to approve`,
      );
    if (record.createdBy === actor && !selfApprovalAllowed())
      throw new NotPermittedError(
        `${actor} created rollout ${id}: another admin must approve it (a one-admin installation sets SWITCHYARD_ROLLOUT_SELF_APPROVAL=1 on the api)`,
      );
    const now = new Date().toISOString();
    await this.#control(id, ['awaiting-approval'], 'running', { approvedBy: actor, startedAt: now });
    await this.#audit(actor, 'rollout.approve', id, { risk: record.risk, createdBy: record.createdBy });
    await this.advance(id);
    return this.get(id);
  }

  /** No new operation starts; the running ones end. */
  async pause(id: string, actor: string): Promise<RolloutView> {
    await this.#control(id, ['running', 'awaiting-approval'], 'paused', {
      pausedKind: 'person',
      pausedAt: new Date().toISOString(),
      pausedReason: `paused by ${actor}`,
    });
    await this.#audit(actor, 'rollout.pause', id, {});
    return this.get(id);
  }

  /**
   * Goes on from a pause. Past a failure budget only an admin may (`admin`),
   * and the budget starts again from the failures so far.
   */
  async resume(id: string, actor: string, options: { admin: boolean }): Promise<RolloutView> {
    const record = await this.#record(id);
    if (record.state !== 'paused')
      throw new ConflictError(`rollout ${id} is ${record.state}, not paused: there is nothing to resume`);
    const pastBudget = record.pausedKind === 'budget';
    if (pastBudget && !options.admin)
      throw new NotPermittedError(
        `rollout ${id} paused because its failure budget was exceeded: only an admin may resume it`,
      );
    // Paused before anyone approved it: back to waiting for approval.
    const to = record.approvedBy || record.risk === 'none' ? 'running' : 'awaiting-approval';
    await this.#control(
      id,
      ['paused'],
      to,
      {
        pausedReason: '-',
        pausedKind: '-',
        pausedAt: '-',
        ...(record.startedAt ? {} : { startedAt: new Date().toISOString() }),
      },
      { resetBudget: pastBudget },
    );
    await this.#audit(actor, 'rollout.resume', id, { pastBudget });
    if (to === 'running') await this.advance(id);
    return this.get(id);
  }

  /** Projects not started never start; the running operations are cancelled as `op cancel` does. */
  async cancel(id: string, actor: string): Promise<RolloutView> {
    const record = await this.#record(id);
    if (isRolloutOver(record.state)) return toRolloutView(record);
    const { outcome } = await this.store.control(
      id,
      ['previewing', 'awaiting-approval', 'running', 'paused'],
      'cancelled',
      { cancelledBy: actor, finishedAt: new Date().toISOString(), pausedReason: '-', pausedKind: '-' },
    );
    if (outcome === 'ok') {
      await this.#audit(actor, 'rollout.cancel', id, { stateBefore: record.state });
      await this.#cancelRunning(id, actor);
      await this.#announce('rollout.finished', id, id);
    }
    return this.get(id);
  }

  /**
   * One step: claims what may start now and starts it. Idempotent; any
   * process may call it at any time.
   */
  async advance(id: string): Promise<void> {
    await this.#afterStep(id, await this.store.step(id));
  }

  /** Called by the worker that ended an operation: records it in its rollout, if any, and advances it. */
  async operationEnded(operationId: string): Promise<void> {
    const rolloutId = await this.store.rolloutOf(operationId);
    if (!rolloutId) return;
    const operation = await this.#operation(operationId);
    if (!operation || !isTerminal(operation.state)) return;
    await this.#recordEnd(rolloutId, operation.projectId, operation);
  }

  /**
   * What a crash may have left undone, for every active rollout: a claimed
   * project without its operation gets it (the same one, by its idempotency
   * key), an ended operation not yet recorded is recorded, an operation of a
   * cancelled rollout is cancelled; then one step. Every worker runs it on a
   * timer; running it twice at once is harmless.
   */
  async sweep(): Promise<void> {
    for (const id of await this.store.active()) {
      const record = await this.store.get(id);
      if (!record) continue;
      await this.#announcePending(id);
      for (const project of await this.store.projects(id)) {
        if (project.state !== 'starting' && project.state !== 'running') continue;
        if (!project.operationId) {
          if (record.state === 'cancelled') await this.#recordEnd(id, project.projectId, 'cancelled');
          else await this.#start(record, project.projectId);
          continue;
        }
        const operation = await this.#operation(project.operationId);
        if (!operation) await this.#recordEnd(id, project.projectId, 'failed');
        else if (isTerminal(operation.state)) await this.#recordEnd(id, project.projectId, operation);
        else if (record.state === 'cancelled')
          await this.deps.operations.cancel(operation.id, record.cancelledBy ?? 'rollout');
        else await this.deps.operations.ensureQueued(operation.id);
      }
      await this.advance(id);
    }
  }

  async #recordEnd(id: string, projectId: string, ended: OperationView | RolloutProjectEnd): Promise<void> {
    const end = typeof ended === 'string' ? ended : endOf(ended);
    await this.#afterStep(id, await this.store.step(id, { projectId, end }));
  }

  async #afterStep(id: string, step: { state: string; events: string[]; claimed: string[] }): Promise<void> {
    if (step.events.length > 0) await this.#announcePending(id);
    if (step.claimed.length === 0) return;
    const record = await this.#record(id);
    await Promise.all(step.claimed.map((projectId) => this.#start(record, projectId)));
  }

  /** The claimed project's operation: created once (its idempotency key), linked, recorded if it already ended. */
  async #start(record: RolloutRecord, projectId: string): Promise<void> {
    const { operations } = this.deps;
    let operation: OperationView;
    try {
      ({ operation } = await operations.create(
        {
          pluginId: record.pluginId,
          projectId,
          action: record.action,
          input: record.input,
          idempotencyKey: `rollout:${record.id}:${projectId}`,
        },
        record.createdBy,
      ));
    } catch (error) {
      // Refused now (plugin disabled, project untrusted or gone): the project fails with why, no operation.
      // Anything else (Redis away) leaves it starting: the sweep tries again.
      if (!(error instanceof SwitchyardError) || error.transient) throw error;
      await this.store.noteError(record.id, projectId, {
        errorCode: errorCode(error),
        errorMessage: messageOf(error),
      });
      return this.#recordEnd(record.id, projectId, 'failed');
    }
    await this.store.started(record.id, projectId, operation.id);
    if (isTerminal(operation.state)) return this.#recordEnd(record.id, projectId, operation);
    // Cancelled while this operation was being created: it never starts either.
    const now = await this.store.get(record.id);
    if (now?.state === 'cancelled') await operations.cancel(operation.id, now.cancelledBy ?? 'rollout');
  }

  async #cancelRunning(id: string, actor: string): Promise<void> {
    for (const project of await this.store.projects(id)) {
      if (project.operationId && (project.state === 'running' || project.state === 'starting'))
        await this.deps.operations.cancel(project.operationId, actor).catch(() => undefined);
    }
    // Those already ended meanwhile are recorded (and the rollout leaves the sweep once none is left).
    await this.sweepOne(id);
  }

  /** The sweep of one rollout (after a cancel: what ended is recorded at once). */
  async sweepOne(id: string): Promise<void> {
    const record = await this.store.get(id);
    if (!record) return;
    for (const project of await this.store.projects(id)) {
      if (project.state !== 'starting' && project.state !== 'running') continue;
      const operation = project.operationId ? await this.#operation(project.operationId) : undefined;
      if (operation && isTerminal(operation.state)) await this.#recordEnd(id, project.projectId, operation);
    }
  }

  async #control(
    id: string,
    from: readonly RolloutState[],
    to: RolloutState,
    fields: Record<string, string>,
    options: { resetBudget?: boolean } = {},
  ): Promise<void> {
    const { outcome, previous } = await this.store.control(id, from, to, fields, options);
    if (outcome === 'missing') throw unknownRollout(id);
    if (outcome !== 'ok')
      throw new ConflictError(`rollout ${id} is ${previous}; this needs it ${from.join(' or ')}`);
  }

  async #record(id: string): Promise<RolloutRecord> {
    const record = await this.store.get(id);
    if (!record) throw unknownRollout(id);
    return record;
  }

  async #operation(id: string): Promise<OperationView | undefined> {
    try {
      return await this.deps.operations.get(id);
    } catch (error) {
      if (error instanceof NotFoundError) return undefined;
      throw error;
    }
  }

  async #audit(
    actor: string,
    action: string,
    target: string,
    detail: Record<string, unknown>,
  ): Promise<void> {
    await appendAudit(this.deps.redis, this.deps.keys, { actor, action, target, detail });
  }

  /**
   * Publishes every event of the rollout still marked unannounced, then
   * unmarks it: the producing process does it at once, the sweep when that
   * process died first. Publishing is keyed by event, so twice is once.
   */
  async #announcePending(id: string): Promise<void> {
    for (const event of await this.store.unannounced(id)) {
      if (event === 'awaiting-approval') await this.#announce('rollout.awaiting-approval', id, id);
      else if (event === 'finished') await this.#announce('rollout.finished', id, id);
      else if (event.startsWith('paused:'))
        await this.#announce('rollout.paused', id, `${id}:${event.slice('paused:'.length)}`);
      await this.store.announced(id, event);
    }
  }

  /** rollout.awaiting-approval, rollout.paused (once per pause: `key`), rollout.finished: the rollout without its input. */
  async #announce(
    event: 'rollout.awaiting-approval' | 'rollout.paused' | 'rollout.finished',
    id: string,
    key: string,
  ): Promise<void> {
    const { notices } = this.deps;
    if (!notices) return;
    const record = await this.store.get(id);
    if (!record) return;
    const { input: _input, ...rollout } = toRolloutView(record);
    await notices.publish(event, { rollout }, { key, pluginId: record.pluginId });
  }
}

function isOffset(value: unknown): value is { o: number } {
  return (
    typeof value === 'object' &&
    value !== null &&
    Number.isInteger((value as { o?: unknown }).o) &&
    (value as { o: number }).o >= 0
  );
}

function unknownRollout(id: string): NotFoundError {
  return new NotFoundError(`unknown rollout ${JSON.stringify(id)} (rollout list shows the known ones)`);
}

/** How an operation's end counts in its rollout: partial success is a failure; OUTCOME_UNKNOWN its own count. */
function endOf(operation: OperationView): RolloutProjectEnd {
  if (operation.state === 'succeeded') return 'succeeded';
  if (operation.state === 'cancelled') return 'cancelled';
  if (operation.errorCode === ERROR_CODES.OUTCOME_UNKNOWN) return 'outcome_unknown';
  return 'failed';
}

export function toRolloutView(record: RolloutRecord): RolloutView {
  return {
    id: record.id,
    name: record.name,
    pluginId: record.pluginId,
    action: record.action,
    input: redactDeep(record.input),
    state: record.state,
    risk: record.risk,
    createdBy: record.createdBy,
    ...(record.approvedBy ? { approvedBy: record.approvedBy } : {}),
    total: record.total,
    skipped: record.skipped,
    waves: record.waveEnds.map((end, index) => ({
      index: index + 1,
      size: end - (record.waveEnds[index - 1] ?? 0),
      state: waveState(record, index),
    })),
    counts: record.counts,
    maxFailures: record.maxFailures,
    concurrency: record.concurrency,
    pauseBetween: record.pauseBetween,
    selection: record.selection,
    createdAt: record.createdAt,
    ...(record.startedAt ? { startedAt: record.startedAt } : {}),
    ...(record.finishedAt ? { finishedAt: record.finishedAt } : {}),
    ...(record.pausedReason ? { pausedReason: record.pausedReason } : {}),
    ...(record.cancelledBy ? { cancelledBy: record.cancelledBy } : {}),
    ...(record.retryOf ? { retryOf: record.retryOf } : {}),
  };
}

function waveState(record: RolloutRecord, index: number): RolloutView['waves'][number]['state'] {
  if (index < record.wave) return 'done';
  if (record.state === 'cancelled') return 'cancelled';
  if (index > record.wave) return 'pending';
  if (record.state === 'succeeded' || record.state === 'failed') return 'done';
  if (record.state === 'running') return 'running';
  if (record.state === 'paused')
    return record.next > (record.waveEnds[index - 1] ?? 0) ? 'paused' : 'pending';
  return 'pending';
}
