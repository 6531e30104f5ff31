// Batches of inspections for every front (api, CLI, web UI, scheduler):
// create one (validated now, recorded, one job per slice of projects), read
// and list them, follow one live, and steer it after it was queued — cancel,
// retry, compare, export (CLI.md "Work"). Workers execute the jobs
// (inspection-runner.ts).
//
// Cancel, from any process: the batch is marked first (a worker checks the
// mark before each project, so queued inspections never start), its queued
// jobs are removed, workers are told over pub/sub to kill the calls they run
// for it (supervisor AbortSignal: process group and descendants), and every
// project without an outcome is recorded `cancelled` (once, like any outcome).
import type { Redis } from 'ioredis';
import { appendAudit, teamOf, type Role } from '../../access/index.js';
import {
  ERROR_CODES,
  InvalidInputError,
  NotPermittedError,
  NotFoundError,
  ProjectNotFoundError,
  inOrder,
} from '../../platform/index.js';
import type { PluginService } from '../../plugins/index.js';
import { checkLabels, type ProjectService } from '../../projects/index.js';
import { nthNewest, resolveIdRef, type EventHub, type Keys, type Queues } from '../../redis/index.js';
import { redactDeep } from '../../safety/index.js';
import type { Notices } from '../notify/index.js';
import { FairQueue, inspectOrder, PRIORITIES, type Priority } from './fair-queue.js';
import {
  INSPECT_ATTEMPTS,
  INSPECT_BACKOFF_MS,
  inspectJobId,
  inspectJobIds,
  inspectJobSchema,
  projectsPerJob,
  type InspectJob,
} from './inspect-jobs.js';
import { announceBatchEnd } from './batch-notices.js';
import { batchCancelMessage } from './batch-messages.js';
import { InspectionRunner, type InspectionGate } from './inspection-runner.js';
import {
  FLEET_DEFAULT_PAGE,
  afterProjectOf,
  byProjectAnswer,
  sortedPage,
  type FleetFactsPage,
  type FleetFactsQuery,
} from './fleet-pages.js';
import { diffBatches, type BatchDiff, type DiffSide } from './batch-diff.js';
import { exportBatch, type ExportFormat, type ExportRow } from './batch-export.js';
import { followBatch, type BatchFollowOptions } from './batch-follow.js';
import {
  byCountNoneFirst,
  countFactValues,
  factIdsOf,
  filterFleet,
  parseWhere,
  rowMatches,
  unknownFactMessage,
  type FactFilter,
  type FleetRow,
} from './fleet-facts.js';
import { pageOfResults, resultsPageText, type ResultRow, type ResultsQuery } from './batch-results.js';
import {
  BatchStore,
  isBatchOver,
  withoutResults,
  type BatchQuery,
  type BatchView,
  type HistoryEntry,
  type ProjectOutcome,
} from './batch-store.js';

/** `facts`: filters (`NAME<op>VALUE`, fleet-facts.ts) and labels every project must carry. */
export interface FleetQuery {
  where?: string[] | undefined;
  labels?: string[] | undefined;
  /** Fact ids the caller names besides the filters' (shown, counted, sorted by): an unknown one is refused. */
  facts?: string[] | undefined;
  /** Stops the read between slices once aborted (the api's request budget). */
  signal?: AbortSignal | undefined;
}

/** One page of the fleet by project id: after which project, how many rows. */
export interface FleetPageQuery extends FleetQuery {
  after?: string | undefined;
  limit: number;
}

/** The most rows one read of the fleet index asks for while a page fills (slices double up to it). */
const FLEET_SLICE_MAX = 5_000;

/** `project history` looks at this many of the plugin's batches unless asked for fewer or more. */
export const HISTORY_LIMIT = 50;

/** GET /projects/:id/actions: what the plugin offered for the project when it last inspected it. */
export interface AdvertisedActions {
  pluginId: string;
  projectId: string;
  /** The batch of that inspection and when it was recorded; absent when none was. */
  batchId?: string;
  inspectedAt?: string;
  actions: { id: string; name: string; description: string; risk: string }[];
}

/** One batch in a plugin's trend (GET /plugins/:id/trend). */
export interface TrendPoint {
  batchId: string;
  createdAt: string;
  state: BatchView['state'];
  total: number;
  succeeded: number;
  failed: number;
  cancelled: number;
  /** Projects failed in this batch whose own previous result (in the batches read) was not a failure. */
  newFailures: number;
  /** The batch covers part of the fleet (named projects, a label): its counts are not the fleet's. */
  partial: boolean;
  /** With `fact`: how many succeeded projects had each value, most common first. */
  distribution?: { value: string; count: number }[];
}

/** addBulk chunk: one round trip per this many jobs, not one per job. */
export const ENQUEUE_CHUNK = 1_000;

/** Every trusted project, these ids, or every project with this label (resolved when the batch is created). */
export type ProjectSelection = string[] | 'all' | { label: string };

export interface BatchServiceDeps {
  redis: Redis;
  keys: Keys;
  plugins: PluginService;
  projects: ProjectService;
  queues: Queues;
  /** The process's shared pub/sub subscriber (the live followers'). */
  events: EventHub;
  /** Webhook events (batch-notices.ts); none: a batch's end is not announced. */
  notices?: Notices;
}

/** How a batch shares the workers (fair-queue.ts): its priority, and who it counts for. */
export interface BatchShareOptions {
  /** Default `normal`; `high` only for an admin (a caller without a role is the local OS user: allowed). */
  priority?: Priority;
  /** The caller's role, when it has one (remote mode); decides whether `high` is allowed. */
  role?: Role;
  /** Whose share the batch's calls count to: default the actor (a schedule's batch: the schedule's owner). */
  requester?: string;
}

/** Who may ask for `high`: docs/CLI.md "Fair share". */
export function checkPriority(priority: string | undefined, role: Role | undefined): Priority {
  const value = priority ?? 'normal';
  if (!(PRIORITIES as readonly string[]).includes(value))
    throw new InvalidInputError(
      `priority must be one of ${PRIORITIES.join(', ')}, not ${JSON.stringify(value)}`,
    );
  if (value === 'high' && role !== undefined && role !== 'admin')
    throw new NotPermittedError(
      `priority high needs the admin role (this token is ${role}); use normal or low`,
    );
  return value as Priority;
}

export class BatchService {
  readonly store: BatchStore;
  readonly fair: FairQueue;

  constructor(private readonly deps: BatchServiceDeps) {
    this.store = new BatchStore(deps.redis, deps.keys);
    this.fair = new FairQueue(deps.redis, deps.keys, deps.queues.inspect);
    const { notices } = deps;
    if (notices) this.store.onBatchEnd = (batchId) => announceBatchEnd(this.store, notices, batchId);
  }

  // ---- a worker's part in the fair queue (fair-queue.ts) ----------------------------------

  /**
   * A worker took a slice's job: once that worker's slots expire (killed), the slice stops
   * counting against the buffer (fair-pick.lua). A job of FIFO order has no slice record.
   */
  async sliceTaken(job: InspectJob, jobId: string | undefined, identity: string): Promise<void> {
    if (job.start !== undefined && jobId !== undefined) await this.fair.taken(jobId, identity);
  }

  /**
   * A slice's job ended for good: its place in the buffer goes to the next slice (with
   * `givenBack`, the projects from there on go back to the front of their batch). The buffer
   * is refilled in the background; a failure of that goes to `onFillError`.
   */
  async sliceEnded(
    job: InspectJob,
    jobId: string | undefined,
    onFillError: (error: Error) => void,
    givenBack?: { start: number; count: number },
  ): Promise<void> {
    if (job.start === undefined || jobId === undefined) return;
    await this.fair.sliceEnded(job.batchId, jobId, givenBack);
    void this.fair.fill().catch(onFillError);
  }

  /** A worker's heartbeat: its slots size the buffer; slices whose jobs are gone are added again, and the buffer filled. How many were repaired. */
  async shareSlots(identity: string, slots: number): Promise<number> {
    await this.fair.heartbeat(identity, slots);
    return (await this.fair.reconcile()).repaired;
  }

  /** A worker stops: its slots no longer count. */
  withdrawSlots(identity: string): Promise<void> {
    return this.fair.withdraw(identity);
  }

  /** The inspect-job lifecycle a worker hands its inspect jobs to (inspection-runner.ts). */
  runner(gate?: InspectionGate): InspectionRunner {
    return new InspectionRunner(this.deps.plugins, this.store, gate);
  }

  /** Validates now, records the batch, enqueues one job per slice of projects in chunks; returns at once. */
  async create(
    pluginId: string,
    selection: ProjectSelection,
    actor: string,
    options: { retryOf?: string; scheduleId?: string; partial?: boolean } & BatchShareOptions = {},
  ): Promise<BatchView> {
    const { priority: asked, role, requester = actor, ...recorded } = options;
    const priority = checkPriority(asked, role);
    const [, projectIds] = await inOrder(
      this.deps.plugins.authorize(pluginId, 'project.inspect', 'project.metadata.read'),
      this.#resolveProjects(selection),
    );
    const partial = recorded.partial ?? selection !== 'all';
    const batch = await this.store.create(
      pluginId,
      projectIds,
      actor,
      {
        actor,
        action: 'batch.create',
        target: '',
        detail: { pluginId, total: projectIds.length, ...recorded, partial, priority, requester },
      },
      { ...recorded, partial, priority, requester },
    );
    if (projectIds.length === 0) return batch;
    if (inspectOrder() === 'fair') {
      const team = await teamOf(this.deps.redis, this.deps.keys, requester);
      await this.fair.enter(batch.batchId, pluginId, projectIds.length, {
        requester,
        priority,
        ...(team ? { team } : {}),
      });
      return batch;
    }
    // SWITCHYARD_INSPECT_ORDER=fifo (a benchmark's baseline): every slice queued at once, in order.
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
          jobId: inspectJobId(batch.batchId, start / perJob),
          attempts: INSPECT_ATTEMPTS,
          backoff: { type: 'exponential' as const, delay: INSPECT_BACKOFF_MS },
        },
      });
    }
    // One job (a small batch, the latency case): add() is one script call without addBulk's MULTI around it.
    if (jobs.length === 1) await this.deps.queues.inspect.add(jobs[0]!.name, jobs[0]!.data, jobs[0]!.opts);
    else
      for (let start = 0; start < jobs.length; start += ENQUEUE_CHUNK) {
        await this.deps.queues.inspect.addBulk(jobs.slice(start, start + ENQUEUE_CHUNK));
      }
    return batch;
  }

  /** With its results unless `results: false` (a large batch's results are many). */
  async get(batchId: string, options: { results?: boolean } = {}): Promise<BatchView> {
    const batch = await this.store.get(batchId, options);
    if (!batch)
      throw new NotFoundError(`unknown batch ${JSON.stringify(batchId)} (batch list shows the known ones)`);
    return batch;
  }

  /** A batch id from what a person typed (id-refs.ts): whole, a unique prefix, or latest~N of the plugin. */
  resolve(ref: string, scope: { pluginId?: string } = {}): Promise<string> {
    const { pluginId } = scope;
    return resolveIdRef(this.deps.redis, ref, {
      kind: 'batch_',
      index: this.deps.keys.batches,
      noun: 'batch',
      ...(pluginId ? { scopeText: `of plugin ${pluginId}` } : {}),
      newest: (skip) =>
        nthNewest(
          (cursor) =>
            this.store.list({ limit: 100, ...(cursor ? { cursor } : {}), ...(pluginId ? { pluginId } : {}) }),
          skip,
        ),
    });
  }

  /** Newest first, filtered, one page (`nextCursor` continues). */
  list(query: BatchQuery = {}) {
    return this.store.list(query);
  }

  /**
   * Follows a batch to its end (batch-follow.ts): onChange gets the batch
   * without results whenever its counts or state change; resolves with the
   * finished batch and its results, or with the latest view (no results) at
   * once when the signal aborts.
   */
  follow(
    batchId: string,
    onChange: (view: BatchView) => void,
    options: BatchFollowOptions = {},
  ): Promise<BatchView> {
    return followBatch(
      { store: this.store, events: this.deps.events, get: (id, options) => this.get(id, options) },
      batchId,
      onChange,
      options,
    );
  }

  /** Idempotent: a batch already over is returned as it is (the request is still audited). */
  async cancel(batchId: string, actor: string): Promise<BatchView> {
    const { queues, keys, redis } = this.deps;
    const batch = await this.get(batchId);
    if (isBatchOver(batch)) {
      await this.#auditCancel(actor, batchId, { outcome: 'already-over', state: batch.state });
      return batch;
    }
    const first = await this.store.markCancelled(batchId, actor);
    await this.fair.cancel(batchId);
    // Slices of FIFO order (the benchmark switch, or queued before the fair queue) by their ids.
    const jobs = inspectJobIds(batch.total);
    // A job a worker holds is locked and stays; the worker skips its remaining projects (the mark).
    await Promise.all(
      Array.from({ length: jobs }, (_, index) =>
        queues.inspect.remove(inspectJobId(batchId, index)).catch(() => 0),
      ),
    );
    await redis.publish(keys.batchCancel, batchCancelMessage.encode(batchId));
    let cancelled = 0;
    const message = `the batch was cancelled by ${actor} before this inspection ended`;
    // One record script call per chunk: each project is still recorded once (one a worker recorded meanwhile is skipped).
    for await (const chunk of this.store.outcomeChunks(batchId)) {
      const pending = chunk.flatMap(([projectId, outcome]) => (outcome === 'pending' ? [projectId] : []));
      cancelled += await this.store.recordAll(
        batchId,
        batch.pluginId,
        pending.map((projectId) => ({
          projectId,
          status: 'cancelled' as const,
          error: { code: ERROR_CODES.CANCELLED, message },
        })),
      );
    }
    await this.#auditCancel(actor, batchId, { outcome: first ? 'cancelled' : 'repeated', cancelled });
    return this.get(batchId);
  }

  /** Cancels every running batch (only the schedule's with `scheduleId`); each as cancel() does. */
  async cancelRunning(filter: { scheduleId?: string }, actor: string): Promise<BatchView[]> {
    const ids: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await this.store.list({ state: 'running', ...filter, ...(cursor ? { cursor } : {}) });
      ids.push(...page.items.map((batch) => batch.batchId));
      cursor = page.nextCursor;
    } while (cursor);
    const cancelled: BatchView[] = [];
    for (const id of ids) cancelled.push(withoutResults(await this.cancel(id, actor)));
    return cancelled;
  }

  /** A new batch over the same plugin and projects (only failed and cancelled ones with failedOnly). */
  async retry(
    batchId: string,
    options: { failedOnly?: boolean } & BatchShareOptions,
    actor: string,
  ): Promise<BatchView> {
    const source = await this.get(batchId);
    let projectIds = await this.store.projectIds(batchId);
    if (options.failedOnly) {
      const again = new Set(
        (source.results ?? []).filter((outcome) => outcome.status !== 'succeeded').map((o) => o.projectId),
      );
      projectIds = projectIds.filter((id) => again.has(id));
    }
    // Projects removed since are left out; the rest must still exist and be allowed.
    const found = projectIds.length > 0 ? await this.deps.projects.getMany(projectIds) : [];
    projectIds = projectIds.filter((_id, index) => found[index] !== undefined);
    if (projectIds.length === 0) {
      throw new InvalidInputError(
        options.failedOnly
          ? `nothing to retry: no project of ${batchId} failed or was cancelled`
          : `nothing to retry: ${batchId} covers no project that still exists`,
      );
    }
    const { failedOnly: _failedOnly, ...share } = options;
    return this.create(source.pluginId, projectIds, actor, {
      ...share,
      retryOf: batchId,
      partial: source.partial === true || projectIds.length < source.total,
    });
  }

  /**
   * One page of the batch's per-project results (batch-results.ts: failures
   * first, one status or all), with the batch's counts, as JSON text in
   * pieces: what a page showing one slice of a large batch needs, in one
   * read. Ordered by the projects' statuses; only the page's own outcomes are
   * read, a few at a time, and at most RESULTS_PAGE_MAX_BYTES of them.
   */
  async results(batchId: string, query: ResultsQuery = {}): Promise<AsyncGenerator<string>> {
    const batch = await this.get(batchId, { results: false });
    const [projectIds, statuses] = await Promise.all([
      this.store.projectIds(batchId),
      this.store.statuses(batchId),
    ]);
    const rows: ResultRow[] = projectIds.map((projectId) => ({
      projectId,
      status: statuses.get(projectId) ?? 'pending',
    }));
    const { items, ...page } = pageOfResults(rows, query);
    return resultsPageText({ batch, ...page }, items, (ids) => this.store.outcomeTexts(batchId, ids));
  }

  /**
   * The batch with its results (`batch show --json`, GET /batches/:id) as JSON
   * text in pieces, by project id: each stored outcome spliced in as it is
   * read, a few at a time, so a reader never holds the whole batch.
   */
  async textWithResults(batchId: string): Promise<AsyncGenerator<string>> {
    const batch = await this.get(batchId, { results: false });
    const ids = (await this.store.recordedIds(batchId)).sort((a, b) => a.localeCompare(b));
    const store = this.store;
    return (async function* () {
      yield `${JSON.stringify(batch).slice(0, -1)},"results":[`;
      let first = true;
      for (let start = 0; start < ids.length; start += 4) {
        const texts = await store.outcomeTexts(batchId, ids.slice(start, start + 4));
        const present = texts.filter((text): text is string => text !== null);
        if (present.length === 0) continue;
        yield `${first ? '' : ','}${present.join(',')}`;
        first = false;
      }
      yield ']}';
    })();
  }

  /** What changed from batch `fromId` to batch `toId`. */
  async diff(fromId: string, toId: string): Promise<BatchDiff> {
    const fromView = await this.get(fromId, { results: false });
    const to = await this.#side(toId);
    const from = {
      batchId: fromId,
      outcomes: await this.store.outcomesAsOf(fromView, [...to.outcomes.keys()]),
    };
    return diffBatches(from, to);
  }

  /**
   * The plugin's fleet (fleet-facts.ts): each registered project's latest successful result, those
   * every `where` filter matches and (with labels) that carry every label, by project id.
   */
  async fleet(pluginId: string, query: FleetQuery = {}): Promise<FleetRow[]> {
    await this.deps.plugins.show(pluginId); // an unknown plugin: PLUGIN_NOT_FOUND, not an empty fleet
    const filters = (query.where ?? []).map(parseWhere);
    const labels = query.labels?.length ? checkLabels(query.labels) : [];
    const registered = new Set(
      (await this.deps.projects.list())
        .filter((project) => labels.every((label) => project.labels.includes(label)))
        .map((project) => project.id),
    );
    const rows = await this.store.fleet(pluginId, query.signal);
    query.signal?.throwIfAborted();
    this.#refuseUnknownFacts(pluginId, namedFacts(filters, query.facts), factIdsOf(rows));
    return filterFleet(rows, filters, registered);
  }

  /**
   * One page of the fleet by project id (GET /plugins/:id/facts unsorted): the
   * rows after project `after` that fleet() would answer, at most `limit`, and
   * whether more follow. Read through the fleet index in slices that double
   * until the page is full, so a page costs its own rows where most rows
   * match (no filter, a common label or value); a filter few rows match reads
   * further, at most the whole fleet as fleet() does. Sorted pages and counts
   * still read the whole fleet: ordering by a fact's value needs every row.
   */
  async fleetPage(pluginId: string, query: FleetPageQuery): Promise<{ items: FleetRow[]; more: boolean }> {
    await this.deps.plugins.show(pluginId);
    const filters = (query.where ?? []).map(parseWhere);
    const labels = query.labels?.length ? checkLabels(query.labels) : [];
    const items: FleetRow[] = [];
    let after = query.after;
    let size = query.limit + 1;
    for (;;) {
      query.signal?.throwIfAborted();
      const slice = await this.store.fleetSlice(pluginId, after, size);
      // Only registered projects, as fleet(): a forgotten project's facts stay in the hash.
      const projects = await this.deps.projects.getMany(slice.rows.map((row) => row.projectId));
      slice.rows.forEach((row, index) => {
        const project = projects[index];
        if (!project || !labels.every((label) => project.labels.includes(label))) return;
        if (rowMatches(row, filters)) items.push(row);
      });
      if (items.length > query.limit || slice.done || slice.last === undefined) break;
      after = slice.last;
      size = Math.min(size * 2, FLEET_SLICE_MAX);
    }
    const named = namedFacts(filters, query.facts);
    // The page's own rows usually show the names are known; only otherwise is the whole fleet read.
    const seen = factIdsOf(items);
    if (named.some((fact) => !seen.has(fact)))
      this.#refuseUnknownFacts(pluginId, named, factIdsOf(await this.store.fleet(pluginId, query.signal)));
    return { items: items.slice(0, query.limit), more: items.length > query.limit };
  }

  /**
   * A typo in a fact name must not read as "no project matches": a name no
   * project of the plugin has is refused, naming the known ones. A plugin with
   * no successful inspection yet has no known facts: nothing is refused.
   */
  #refuseUnknownFacts(pluginId: string, named: readonly string[], known: ReadonlySet<string>): void {
    if (known.size === 0) return;
    const unknown = named.find((fact) => !known.has(fact));
    if (unknown !== undefined) throw new InvalidInputError(unknownFactMessage(pluginId, unknown, known));
  }

  /**
   * One page of the fleet as every front shows it (GET /plugins/:id/facts, `facts`):
   * by project id unsorted (a page costs the page), or sorted by `sort`'s value
   * (the whole filtered fleet is read); stored redacted as recorded, redacted
   * again as read (patterns added since).
   */
  async factsPage(pluginId: string, query: FleetFactsQuery): Promise<FleetFactsPage> {
    const { sort, order, cursor, limit, ...filters } = query;
    const page =
      sort === undefined
        ? await this.fleetPage(pluginId, {
            ...filters,
            after: afterProjectOf(cursor),
            limit: limit ?? FLEET_DEFAULT_PAGE,
          }).then(({ items, more }) => byProjectAnswer(items, more))
        : sortedPage(
            await this.fleet(pluginId, { ...filters, facts: [...(filters.facts ?? []), sort] }),
            sort,
            { ...(order ? { order } : {}), ...(cursor ? { cursor } : {}), ...(limit ? { limit } : {}) },
          );
    return { ...page, items: redactDeep(page.items) };
  }

  /** How many projects of the (filtered) fleet have each value of `fact`, redacted as read. */
  async factCounts(
    pluginId: string,
    fact: string,
    query: FleetQuery,
  ): Promise<{ fact: string; total: number; counts: ReturnType<typeof countFactValues> }> {
    const rows = await this.fleet(pluginId, { ...query, facts: [fact] });
    return { fact, total: rows.length, counts: redactDeep(countFactValues(rows, fact)) };
  }

  /**
   * `project history`: the project's result in each of the plugin's kept batches, newest first,
   * at most `limit` batches (default HISTORY_LIMIT).
   */
  async history(projectId: string, pluginId: string, limit = HISTORY_LIMIT): Promise<HistoryEntry[]> {
    await this.deps.plugins.show(pluginId); // an unknown plugin: PLUGIN_NOT_FOUND, not an empty history
    if (!(await this.deps.projects.get(projectId))) throw new ProjectNotFoundError(projectId);
    // Stored redacted as recorded, redacted again as read (patterns added since).
    return redactDeep(await this.store.history(pluginId, projectId, limit));
  }

  /**
   * The actions the plugin advertised for the project in its latest
   * inspection (none when that inspection failed or none ran): what the web
   * UI's run form offers, each with the risk the plugin gave it.
   */
  async actions(projectId: string, pluginId: string): Promise<AdvertisedActions> {
    await this.deps.plugins.show(pluginId);
    if (!(await this.deps.projects.get(projectId))) throw new ProjectNotFoundError(projectId);
    const latest = await this.store.latest(pluginId, projectId);
    return redactDeep({
      pluginId,
      projectId,
      ...(latest ? { batchId: latest.batchId, inspectedAt: latest.at } : {}),
      actions: latest?.actions ?? [],
    });
  }

  /**
   * actions() of many known projects at once (a rollout's selection): the
   * actions each one's latest inspection advertised, in the order given,
   * read in a few round trips however many projects.
   */
  async actionsOfEach(
    pluginId: string,
    projectIds: readonly string[],
  ): Promise<AdvertisedActions['actions'][]> {
    await this.deps.plugins.show(pluginId);
    const latest = await this.store.latestOfEach(pluginId, projectIds);
    return latest.map((entry) => redactDeep(entry?.actions ?? []));
  }

  /**
   * The plugin's trend over its newest `count` kept batches, oldest first: each batch's counts,
   * its new failures (failed here, not in the batch before it) and, with `fact`, how many
   * succeeded projects had each value of it.
   */
  async trend(pluginId: string, count: number, fact?: string): Promise<TrendPoint[]> {
    await this.deps.plugins.show(pluginId); // an unknown plugin: PLUGIN_NOT_FOUND, not an empty trend
    const page = await this.store.list({ pluginId, limit: Math.min(count + 1, 500) });
    const batches = page.items.slice(0, count + 1).reverse();
    const points: TrendPoint[] = [];
    // Each project's status in its own previous result among the batches read (a partial batch covers few).
    const lastStatus = new Map<string, ProjectOutcome['status']>();
    for (const [index, batch] of batches.entries()) {
      let newFailures = 0;
      const values = new Map<string, number>();
      for await (const chunk of this.store.outcomeChunks(batch.batchId)) {
        for (const [projectId, outcome] of chunk) {
          if (outcome === 'pending') continue;
          if (outcome.status === 'failed' && lastStatus.get(projectId) !== 'failed') newFailures += 1;
          lastStatus.set(projectId, outcome.status);
          if (fact === undefined || outcome.status !== 'succeeded') continue;
          const value = outcome.result?.facts.find((item) => item.id === fact)?.value;
          if (value !== undefined) values.set(value, (values.get(value) ?? 0) + 1);
        }
      }
      // The oldest batch read only tells the next one what failed before it (when more than `count` are kept).
      if (index > 0 || batches.length <= count)
        points.push({
          batchId: batch.batchId,
          createdAt: batch.createdAt,
          state: batch.state,
          total: batch.total,
          succeeded: batch.succeeded,
          failed: batch.failed,
          cancelled: batch.cancelled,
          newFailures,
          partial: batch.partial === true,
          ...(fact === undefined
            ? {}
            : {
                distribution: [...values]
                  .map(([value, projects]) => ({ value, count: projects }))
                  .sort(byCountNoneFirst),
              }),
        });
    }
    return redactDeep(points);
  }

  /** The newest batch of the same plugin created before this one (undefined: none is kept). */
  async previous(batchId: string): Promise<BatchView | undefined> {
    return this.store.previous(await this.get(batchId, { results: false }));
  }

  /** The export's text, chunk by chunk (projects in queue order; pending ones too). */
  async export(batchId: string, format: ExportFormat): Promise<AsyncGenerator<string>> {
    await this.get(batchId, { results: false }); // unknown batch: an error now, before any output
    const chunks = this.store.outcomeChunks(batchId);
    async function* rows(): AsyncGenerator<ExportRow[]> {
      for await (const chunk of chunks)
        yield chunk.map(([projectId, outcome]) =>
          outcome === 'pending' ? { projectId, status: 'pending' as const } : outcome,
        );
    }
    return exportBatch(batchId, format, rows());
  }

  /** How many workers consume the inspect queue now (0: queued work would wait forever). */
  workersConsuming(): Promise<number> {
    return this.deps.queues.inspect.getWorkersCount();
  }

  async #side(batchId: string): Promise<DiffSide> {
    await this.get(batchId, { results: false });
    const outcomes: DiffSide['outcomes'] = new Map();
    for await (const chunk of this.store.outcomeChunks(batchId))
      for (const [projectId, outcome] of chunk) outcomes.set(projectId, outcome);
    return { batchId, outcomes };
  }

  async #resolveProjects(selection: ProjectSelection): Promise<string[]> {
    const { projects } = this.deps;
    if (selection === 'all')
      return (await projects.list()).filter((project) => project.trusted).map((project) => project.id);
    if (!Array.isArray(selection)) {
      // Untrusted ones too: each fails PROJECT_UNTRUSTED where the owner sees it, none is skipped quietly.
      const [label] = checkLabels([selection.label]);
      const labelled = (await projects.list()).filter((project) => project.labels.includes(label!));
      if (labelled.length === 0)
        throw new InvalidInputError(
          `no project has the label ${label} (project list shows the labels; project label add sets one)`,
        );
      return labelled.map((project) => project.id);
    }
    if (selection.length === 0) throw new InvalidInputError('name at least one project, or use --all');
    const unique = [...new Set(selection)];
    const found = await projects.getMany(unique);
    const unknown = unique.filter((_id, index) => found[index] === undefined);
    if (unknown.length > 0) {
      throw new NotFoundError(
        `unknown project${unknown.length > 1 ? 's' : ''} ${unknown.map((id) => JSON.stringify(id)).join(', ')} (project list shows the known ones)`,
      );
    }
    return unique;
  }

  async #auditCancel(actor: string, batchId: string, detail: Record<string, unknown>): Promise<void> {
    await appendAudit(this.deps.redis, this.deps.keys, {
      actor,
      action: 'batch.cancel',
      target: batchId,
      detail,
    });
  }
}

/** The fact ids a fleet query names: its filters' and the others it gives. */
function namedFacts(filters: readonly FactFilter[], facts: readonly string[] = []): string[] {
  return [...new Set([...filters.map((filter) => filter.fact), ...facts])];
}
