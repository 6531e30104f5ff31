// Rollouts for every front (docs/ARCHITECTURE.md "Rollouts"): one action of
// one plugin, with one input, over a selection of projects fixed at creation,
// each project an ordinary durable operation, started in waves within a
// failure budget, after an approval when the action may change anything.
// What drives a rollout: `advance` (after creation, approval, resume),
// `operationEnded` (the worker that ended one of its operations) and `sweep`
// (a timer in every worker), each an idempotent step (rollout-step.lua) that
// records and claims atomically; a claimed project's operation is created
// with an idempotency key of the rollout and the project, so whichever
// process repeats a step after a crash, no project runs twice. A preview
// action (risk none) runs first, the same way, on every project
// (rollout-preview-step.lua, key rollout:<id>:preview:<project>), while the
// rollout is `previewing`; then the rollout waits for approval.
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
import { rolloutExportChunks, type RolloutExportFormat } from './rollout-export.js';
import { createOnce } from './rollout-idempotency.js';
import { selectProjects, type RolloutSelection } from './rollout-selection.js';
import {
  RolloutStore,
  isRolloutOver,
  type RolloutProjectEnd,
  type RolloutProjectState,
  type RolloutQuery,
  type RolloutRecord,
  type RolloutState,
  type HeldKey,
  type RolloutProjectRow,
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
  /** An action of risk none run first on every project, for a person to look at before approving. */
  previewAction?: string;
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
  previewAction?: string;
  /** How the previews stand, as `counts` does for the real run. */
  previewCounts?: RolloutRecord['counts'];
}

/** A project's preview: its operation's state and what it answered (output bounded, redacted as stored). */
export interface RolloutPreviewView {
  state: RolloutProjectState;
  operationId?: string;
  summary?: string;
  output?: JsonValue;
  /** The output was longer than PREVIEW_OUTPUT_MAX_CHARS of JSON: `output` is its beginning, as a string. */
  outputTruncated?: true;
  errorCode?: string;
  errorMessage?: string;
}

/** Who asks, beyond the audit actor, and how (POST /rollouts and /retry). */
export interface RolloutRequestOptions {
  /** The Idempotency-Key header (rollout-idempotency.ts). */
  idempotencyKey?: string;
  /** The requesting token's id: what the two-person rule compares (docs/CLI.md); none in-process. */
  tokenId?: string;
}

/** A rollout in a list: all but its selection (rollout show has it). */
export type RolloutListItem = Omit<RolloutView, 'selection'>;

export interface RolloutProjectView {
  projectId: string;
  /** The wave it belongs to (from 1). */
  wave: number;
  operationId?: string;
  state: RolloutProjectState;
  errorCode?: string;
  errorMessage?: string;
  /** With a preview action: how this project's preview went. */
  preview?: RolloutPreviewView;
}

/** A page of projects carries each one's preview output: at most this much JSON of it. */
export const PREVIEW_OUTPUT_MAX_CHARS = 16_384;

export interface RolloutServiceDeps {
  redis: Redis;
  keys: Keys;
  plugins: PluginService;
  projects: ProjectService;
  batches: BatchService;
  operations: OperationService;
  notices?: Notices;
}

/** The idempotency keys of rollouts' operations (`rollout:<rollout>:<project>`): POST /operations refuses them. */
export const ROLLOUT_KEY_PREFIX = 'rollout:';

/** What one sweep did: `skipped` when this process's previous sweep was still running. */
export interface SweepReport {
  skipped: boolean;
  /** Rollouts looked at. */
  rollouts: number;
  /** Projects in flight looked at. */
  projects: number;
}

/** Rollouts and in-flight projects one sweep looks at, at most (a rollout runs at most 100 at once). */
export const SWEEP_BUDGET = 1000;

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
  async create(
    request: RolloutRequest,
    actor: string,
    options: RolloutRequestOptions = {},
  ): Promise<RolloutView> {
    return (await this.createOnce(request, actor, options)).rollout;
  }

  /** create(), answering also whether it created the rollout or its Idempotency-Key already named one. */
  createOnce(
    request: RolloutRequest,
    actor: string,
    options: RolloutRequestOptions = {},
  ): Promise<{ rollout: RolloutView; created: boolean }> {
    return this.#once(actor, options, request, (placement) =>
      this.#create(request, actor, options, placement),
    );
  }

  async #once(
    actor: string,
    options: RolloutRequestOptions,
    body: unknown,
    make: (placement?: { id: string; heldKey: HeldKey }) => Promise<RolloutView>,
  ): Promise<{ rollout: RolloutView; created: boolean }> {
    if (options.idempotencyKey === undefined) return { rollout: await make(), created: true };
    return createOnce(
      this.store,
      this.deps.keys,
      {
        key: options.idempotencyKey,
        requester: options.tokenId ? `token-id:${options.tokenId}` : actor,
        body,
      },
      (id, heldKey) => make({ id, heldKey }),
      async (id) => {
        const record = await this.store.get(id);
        return record ? toRolloutView(record) : undefined;
      },
    );
  }

  async #create(
    request: RolloutRequest,
    actor: string,
    options: RolloutRequestOptions,
    placement?: { id: string; heldKey: HeldKey },
  ): Promise<RolloutView> {
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
    const { previewAction } = request;
    if (previewAction !== undefined && (typeof previewAction !== 'string' || previewAction.trim() === ''))
      throw new InvalidInputError("--preview-action must name one of the plugin's actions (of risk none)");
    if (previewAction === request.action)
      throw new InvalidInputError(
        `--preview-action ${previewAction} is the action itself: name another action of the plugin, of risk none (a dry run)`,
      );
    const selected = await selectProjects(
      { projects, batches },
      request.pluginId,
      request.action,
      request.selection,
      previewAction,
    );
    const total = selected.projectIds.length;
    if (total === 0)
      throw new InvalidInputError(
        `the selection (${selected.described.join(' ')}) holds no project to run on${selected.skipped.length > 0 ? `; skipped: ${selected.skipped.map((entry) => `${entry.projectId} (${entry.reason})`).join(', ')}` : ''}`,
      );
    if (previewAction !== undefined && selected.previewRisk !== 'none')
      throw new InvalidInputError(
        `--preview-action ${previewAction} must be an action of risk none (a dry run), but the selected projects' latest inspections advertise it as risk ${selected.previewRisk ?? 'unknown'}${selected.previewRisk === 'unknown' ? ' (not advertised by every one of them)' : ''}`,
      );
    const ends = waveEnds(request.waves ?? DEFAULT_WAVES, total);
    const maxFailures = maxFailuresOf(request.maxFailures ?? DEFAULT_MAX_FAILURES, total);
    const record = await this.store.create(
      {
        name: request.name ?? `${request.action} on ${total} project${total === 1 ? '' : 's'}`,
        pluginId: request.pluginId,
        action: request.action,
        input,
        // A preview is looked at by a person before anything changes: it always ends awaiting approval.
        state: previewAction ? 'previewing' : selected.risk === 'none' ? 'running' : 'awaiting-approval',
        risk: selected.risk,
        createdBy: actor,
        ...(options.tokenId ? { createdByTokenId: options.tokenId } : {}),
        total,
        skipped: selected.skipped,
        waveEnds: ends,
        concurrency,
        maxFailures,
        pauseBetween: request.pauseBetween === true,
        selection: selected.described,
        ...(request.retryOf ? { retryOf: request.retryOf } : {}),
        ...(previewAction ? { previewAction } : {}),
      },
      selected.projectIds,
      placement ?? {},
    );
    await this.#audit(actor, 'rollout.create', record.id, {
      pluginId: record.pluginId,
      action: record.action,
      total,
      skipped: selected.skipped.length,
      risk: record.risk,
      ...(previewAction ? { previewAction } : {}),
    });
    if (record.state === 'awaiting-approval') await this.#announcePending(record.id);
    else await this.advance(record.id);
    return this.get(record.id);
  }

  async get(id: string): Promise<RolloutView> {
    return toRolloutView(await this.#record(id));
  }

  /** Newest first, filtered, one page. */
  async list(query: RolloutQuery = {}): Promise<Page<RolloutListItem>> {
    const page = await this.store.list(query);
    return {
      ...page,
      items: page.items.map((record) => {
        const { selection: _selection, ...item } = toRolloutView(record);
        return item;
      }),
    };
  }

  /**
   * The rollout's projects in wave order, with how each one's operation ended; one page, read as
   * a slice of the wave order (a `state` filter reads on until the page is full), never the whole.
   */
  async projects(
    id: string,
    query: { state?: RolloutProjectState; limit?: number; cursor?: string } = {},
  ): Promise<Page<RolloutProjectView>> {
    const record = await this.#record(id);
    // The cursor is a position in the wave order.
    let position = query.cursor ? decodeCursor(query.cursor, isOffset).o : 0;
    const limit = pageLimit(query.limit);
    const slice: (RolloutProjectRow & { wave: number })[] = [];
    while (slice.length < limit && position < record.total) {
      const rows = await this.store.projectRange(id, position, query.state ? Math.max(limit, 500) : limit);
      if (rows.length === 0) break;
      for (const row of rows) {
        if (slice.length === limit) break;
        if (!query.state || row.state === query.state)
          slice.push({ ...row, wave: waveOf(record.waveEnds, position) + 1 });
        position += 1;
      }
    }
    const operations = await Promise.all(
      slice.map((project) => (project.operationId ? this.#operation(project.operationId) : undefined)),
    );
    const errors = await this.store.errors(
      id,
      slice.map((project) => project.projectId),
    );
    const previews = record.previewAction ? await this.#previews(id, slice) : [];
    const items = slice.map((project, index) => {
      const operation = operations[index];
      const error = errors[index];
      const code = operation?.errorCode ?? error?.errorCode;
      const message = operation?.errorMessage ?? error?.errorMessage;
      const preview = previews[index];
      return {
        ...project,
        ...(code ? { errorCode: code } : {}),
        ...(message ? { errorMessage: message } : {}),
        ...(preview ? { preview } : {}),
      };
    });
    return {
      items,
      ...(position < record.total ? { nextCursor: encodeCursor({ o: position }) } : {}),
    };
  }

  /**
   * A new rollout of this one's failed projects (not its OUTCOME_UNKNOWN ones: the plugin may have
   * acted there, so a person looks first), with the same action, input, concurrency and budget.
   */
  async retry(id: string, actor: string, options: RolloutRequestOptions = {}): Promise<RolloutView> {
    return (await this.retryOnce(id, actor, options)).rollout;
  }

  /** retry(), answering also whether it created the rollout or its Idempotency-Key already named one. */
  retryOnce(
    id: string,
    actor: string,
    options: RolloutRequestOptions = {},
  ): Promise<{ rollout: RolloutView; created: boolean }> {
    return this.#once(actor, options, { retryOf: id, failed: true }, async (placement) => {
      const record = await this.#record(id);
      const failed = (await this.store.projects(id))
        .filter((project) => project.state === 'failed')
        .map((project) => project.projectId);
      if (failed.length === 0)
        throw new InvalidInputError(
          `rollout ${id} has no failed project to retry (OUTCOME_UNKNOWN ones are never retried: check them, then name them in a new rollout)`,
        );
      return this.#create(
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
        options,
        placement,
      );
    });
  }

  /**
   * Every project with its wave, state, operation and error, as JSON lines or CSV: written page by
   * page as it is read (an unknown rollout fails here, before anything is written).
   */
  async export(id: string, format: RolloutExportFormat): Promise<AsyncGenerator<string>> {
    await this.#record(id);
    const pages = async function* (service: RolloutService) {
      let cursor: string | undefined;
      do {
        const page = await service.projects(id, { limit: 500, ...(cursor ? { cursor } : {}) });
        yield page.items;
        cursor = page.nextCursor;
      } while (cursor);
    };
    return rolloutExportChunks(id, pages(this), format);
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
  async approve(id: string, actor: string, options: { tokenId?: string } = {}): Promise<RolloutView> {
    const record = await this.#record(id);
    if (record.state !== 'awaiting-approval')
      throw new ConflictError(
        `rollout ${id} is ${record.state}, not awaiting-approval: there is nothing to approve`,
      );
    if (isCreator(record, actor, options.tokenId) && !selfApprovalAllowed())
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
    // Paused before anyone approved it: back to waiting for approval (always after a preview).
    const to =
      record.approvedBy || (record.risk === 'none' && !record.previewAction)
        ? 'running'
        : 'awaiting-approval';
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
      if (record.previewAction) await this.#cancelPreviews(id, actor);
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
    await this.#afterPreviewStep(id, await this.store.previewStep(id));
  }

  /** Called by the worker that ended an operation: records it in its rollout, if any, and advances it. */
  async operationEnded(operationId: string): Promise<void> {
    const rolloutId = await this.store.rolloutOf(operationId);
    if (!rolloutId) return;
    const operation = await this.#operation(operationId);
    if (!operation || !isTerminal(operation.state)) return;
    if (await this.store.isPreview(rolloutId, operation.projectId, operationId))
      await this.#recordPreviewEnd(rolloutId, operation.projectId, operation);
    else await this.#recordEnd(rolloutId, operation.projectId, operation);
  }

  /**
   * What a crash may have left undone, for every active rollout: a claimed
   * project without its operation gets it (the same one, by its idempotency
   * key), an ended operation not yet recorded is recorded, an operation of a
   * cancelled rollout is cancelled; then one step. It reads only the projects
   * in flight (the in-flight set the Lua scripts keep), at most `budget`
   * (SWEEP_BUDGET) rollouts and projects a run (the next run goes on after the
   * last rollout this one looked at), and a run still going when the timer
   * fires again is not doubled (one per process; other processes' runs at
   * the same time are harmless). Answers what it did.
   */
  async sweep(options: { budget?: number } = {}): Promise<SweepReport> {
    if (this.#sweeping) return { skipped: true, rollouts: 0, projects: 0 };
    this.#sweeping = true;
    try {
      return await this.#sweepOnce(options.budget ?? SWEEP_BUDGET);
    } finally {
      this.#sweeping = false;
    }
  }

  #sweeping = false;
  /** Where the next sweep starts among the active rollouts (a run cut short by the budget goes on there). */
  #sweepFrom = 0;

  async #sweepOnce(budget: number): Promise<SweepReport> {
    const active = (await this.store.active()).sort();
    const report: SweepReport = { skipped: false, rollouts: 0, projects: 0 };
    const first = this.#sweepFrom % Math.max(active.length, 1);
    for (let offset = 0; offset < active.length; offset++) {
      if (report.rollouts + report.projects >= budget) break;
      const index = (first + offset) % active.length;
      const id = active[index]!;
      this.#sweepFrom = index + 1;
      const record = await this.store.get(id);
      if (!record) continue;
      report.rollouts += 1;
      await this.#announcePending(id);
      for (const project of await this.store.inFlight(id)) {
        report.projects += 1;
        await this.#repair(record, project, {
          recordEnd: (projectId, ended) => this.#recordEnd(id, projectId, ended),
          start: (projectId) => this.#start(record, projectId),
        });
      }
      // Previews are read only while some are in flight (previewing, or a cancel's last ones).
      if ((record.previewCounts?.running ?? 0) > 0) await this.#sweepPreviews(record);
      await this.advance(id);
    }
    return report;
  }

  /** The sweep's part for previews: the same repairs, on the preview hashes. */
  async #sweepPreviews(record: RolloutRecord): Promise<void> {
    const { id } = record;
    for (const preview of await this.store.previews(id)) {
      if (preview.state !== 'starting' && preview.state !== 'running') continue;
      await this.#repair(record, preview, {
        recordEnd: (projectId, ended) => this.#recordPreviewEnd(id, projectId, ended),
        start: (projectId) => this.#startPreview(record, projectId),
      });
    }
  }

  /**
   * The sweep's repair of one claimed project, for the real run and its previews alike:
   * it gets its operation, its end is recorded, or its operation is cancelled or queued again.
   */
  async #repair(
    record: RolloutRecord,
    claimed: { projectId: string; operationId?: string | undefined },
    track: {
      recordEnd(projectId: string, ended: OperationView | RolloutProjectEnd): Promise<void>;
      start(projectId: string): Promise<void>;
    },
  ): Promise<void> {
    if (!claimed.operationId) {
      if (record.state === 'cancelled') await track.recordEnd(claimed.projectId, 'cancelled');
      else await track.start(claimed.projectId);
      return;
    }
    const operation = await this.#operation(claimed.operationId);
    if (!operation) await track.recordEnd(claimed.projectId, 'failed');
    else if (isTerminal(operation.state)) await track.recordEnd(claimed.projectId, operation);
    else if (record.state === 'cancelled')
      await this.deps.operations.cancel(operation.id, record.cancelledBy ?? 'rollout');
    else await this.deps.operations.ensureQueued(operation.id);
  }

  async #recordPreviewEnd(
    id: string,
    projectId: string,
    ended: OperationView | RolloutProjectEnd,
  ): Promise<void> {
    const end = typeof ended === 'string' ? ended : endOf(ended);
    await this.#afterPreviewStep(id, await this.store.previewStep(id, { projectId, end }));
  }

  async #afterPreviewStep(id: string, step: { events: string[]; claimed: string[] }): Promise<void> {
    if (step.events.length > 0) await this.#announcePending(id);
    if (step.claimed.length === 0) return;
    const record = await this.#record(id);
    await Promise.all(step.claimed.map((projectId) => this.#startPreview(record, projectId)));
  }

  /** A claimed preview's operation: created once (rollout:<id>:preview:<project>), linked, recorded if it ended. */
  #startPreview(record: RolloutRecord, projectId: string): Promise<void> {
    return this.#createOperation(record, projectId, {
      action: record.previewAction!,
      idempotencyKey: `${ROLLOUT_KEY_PREFIX}${record.id}:preview:${projectId}`,
      preview: true,
      started: (operationId) => this.store.previewStarted(record.id, projectId, operationId),
      recordEnd: (ended) => this.#recordPreviewEnd(record.id, projectId, ended),
    });
  }

  /** Previews not claimed never start; running preview operations are cancelled; those ended are recorded. */
  async #cancelPreviews(id: string, actor: string): Promise<void> {
    await this.#afterPreviewStep(id, await this.store.previewStep(id));
    for (const preview of await this.store.previews(id)) {
      if (!preview.operationId || (preview.state !== 'running' && preview.state !== 'starting')) continue;
      await this.deps.operations.cancel(preview.operationId, actor).catch(() => undefined);
      const operation = await this.#operation(preview.operationId);
      if (operation && isTerminal(operation.state))
        await this.#recordPreviewEnd(id, preview.projectId, operation);
    }
  }

  /** Each project's preview (state, operation, summary, bounded output, error), for one page of projects. */
  async #previews(id: string, slice: readonly { projectId: string }[]): Promise<RolloutPreviewView[]> {
    const byProject = new Map((await this.store.previews(id)).map((entry) => [entry.projectId, entry]));
    const entries = slice.map((project) => byProject.get(project.projectId));
    const [operations, errors] = await Promise.all([
      Promise.all(
        entries.map((entry) => (entry?.operationId ? this.#operation(entry.operationId) : undefined)),
      ),
      this.store.errors(
        id,
        slice.map((project) => project.projectId),
        { preview: true },
      ),
    ]);
    return entries.map((entry, index) => {
      const operation = operations[index];
      const code = operation?.errorCode ?? errors[index]?.errorCode;
      const message = operation?.errorMessage ?? errors[index]?.errorMessage;
      return {
        state: entry?.state ?? 'pending',
        ...(entry?.operationId ? { operationId: entry.operationId } : {}),
        ...(operation?.result ? { summary: operation.result.summary } : {}),
        ...(operation?.result ? boundedOutput(operation.result.output) : {}),
        ...(code ? { errorCode: code } : {}),
        ...(message ? { errorMessage: message } : {}),
      };
    });
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
  #start(record: RolloutRecord, projectId: string): Promise<void> {
    return this.#createOperation(record, projectId, {
      action: record.action,
      idempotencyKey: `${ROLLOUT_KEY_PREFIX}${record.id}:${projectId}`,
      preview: false,
      started: (operationId) => this.store.started(record.id, projectId, operationId),
      recordEnd: (ended) => this.#recordEnd(record.id, projectId, ended),
    });
  }

  /** The claimed project's operation (of the action or its preview), for #start and #startPreview. */
  async #createOperation(
    record: RolloutRecord,
    projectId: string,
    track: {
      action: string;
      idempotencyKey: string;
      preview: boolean;
      started(operationId: string): Promise<unknown>;
      recordEnd(ended: OperationView | RolloutProjectEnd): Promise<void>;
    },
  ): Promise<void> {
    const { operations } = this.deps;
    let operation: OperationView;
    try {
      ({ operation } = await operations.create(
        {
          pluginId: record.pluginId,
          projectId,
          action: track.action,
          input: record.input,
          idempotencyKey: track.idempotencyKey,
        },
        record.createdBy,
      ));
    } catch (error) {
      // Refused now (plugin disabled, project untrusted or gone): the project fails with why, no operation.
      // Anything else (Redis away) leaves it starting: the sweep tries again.
      if (!(error instanceof SwitchyardError) || error.transient) throw error;
      await this.store.noteError(
        record.id,
        projectId,
        { errorCode: errorCode(error), errorMessage: messageOf(error) },
        { preview: track.preview },
      );
      return track.recordEnd('failed');
    }
    await track.started(operation.id);
    if (isTerminal(operation.state)) return track.recordEnd(operation);
    // Cancelled while this operation was being created: it never starts either.
    const now = await this.store.get(record.id);
    if (now?.state === 'cancelled') await operations.cancel(operation.id, now.cancelledBy ?? 'rollout');
  }

  async #cancelRunning(id: string, actor: string): Promise<void> {
    for (const project of await this.store.inFlight(id)) {
      if (project.operationId)
        await this.deps.operations.cancel(project.operationId, actor).catch(() => undefined);
    }
    // Those already ended meanwhile are recorded (and the rollout leaves the sweep once none is left).
    await this.sweepOne(id);
  }

  /** The sweep of one rollout (after a cancel: what ended is recorded at once). */
  async sweepOne(id: string): Promise<void> {
    const record = await this.store.get(id);
    if (!record) return;
    for (const project of await this.store.inFlight(id)) {
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
    for (const { event, reason } of await this.store.unannounced(id)) {
      if (event === 'awaiting-approval') await this.#announce('rollout.awaiting-approval', id, id);
      else if (event === 'finished') await this.#announce('rollout.finished', id, id);
      else if (event.startsWith('paused:'))
        await this.#announce('rollout.paused', id, `${id}:${event.slice('paused:'.length)}`, {
          state: 'paused',
          pausedReason: reason,
        });
      await this.store.announced(id, event);
    }
  }

  /** rollout.awaiting-approval, rollout.paused (once per pause: `key`), rollout.finished: the rollout without its input. */
  async #announce(
    event: 'rollout.awaiting-approval' | 'rollout.paused' | 'rollout.finished',
    id: string,
    key: string,
    /** What the event saw (a pause's reason), over the rollout as it is when published. */
    seen: Partial<RolloutView> = {},
  ): Promise<void> {
    const { notices } = this.deps;
    if (!notices) return;
    const record = await this.store.get(id);
    if (!record) return;
    const { input: _input, ...rollout } = { ...toRolloutView(record), ...seen };
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

/**
 * docs/CLI.md "two-person rule": the creating token (by its id, which a token re-created under the
 * same name does not share) or any token of the creator's name (a name re-created stands for the
 * same person) is the creator.
 */
function isCreator(record: RolloutRecord, actor: string, tokenId: string | undefined): boolean {
  if (tokenId !== undefined && record.createdByTokenId === tokenId) return true;
  return record.createdBy === actor;
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
    ...(record.previewAction ? { previewAction: record.previewAction } : {}),
    ...(record.previewCounts ? { previewCounts: record.previewCounts } : {}),
  };
}

/** A preview's output as a page carries it: whole, or its first PREVIEW_OUTPUT_MAX_CHARS of JSON. */
function boundedOutput(output: JsonValue): { output: JsonValue; outputTruncated?: true } {
  const text = JSON.stringify(output) ?? 'null';
  if (text.length <= PREVIEW_OUTPUT_MAX_CHARS) return { output };
  return { output: `${text.slice(0, PREVIEW_OUTPUT_MAX_CHARS)}…`, outputTruncated: true };
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
