// Inspection batches: one batch → one job per project, counts, per-project
// results and the latest result per plugin × project. A result is recorded
// once per project (lua/batch-record.lua skips a project that has one), so a
// job that runs again after its worker died can never count twice.
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { fleetIdKey, projectIdOfKey, type FleetRow } from './fleet-facts.js';
import type { InspectResult } from '@switchyard/plugin-sdk/protocol';
import type { Redacted } from '../../plugins/index.js';
import { auditInto, type AuditInput } from '../../access/index.js';
import type { Keys, Scripts, Page, PageRequest } from '../../redis/index.js';
import { batchProgressMessage, type BatchProgressMessage } from './batch-messages.js';
import { markCallStateChanged, scriptsOn, encodeCursor, sortedSetPage } from '../../redis/index.js';

export interface ProjectOutcome {
  projectId: string;
  status: 'succeeded' | 'failed' | 'cancelled';
  /** As the plugin returned it, redacted (PROTOCOL §10). */
  result?: Redacted<InspectResult>;
  error?: { code: string; message: string };
}

/** docs/CLI.md's document for `inspect --json` and `batch show`. */
export interface BatchView {
  batchId: string;
  pluginId: string;
  /** `running` until every project has an outcome; then `cancelled` when cancelled, else `failed` when any failed. */
  state: BatchState;
  total: number;
  pending: number;
  succeeded: number;
  failed: number;
  cancelled: number;
  createdAt: string;
  createdBy: string;
  finishedAt?: string;
  /** When `batch cancel` was asked (running calls are being stopped). */
  cancelledAt?: string;
  cancelledBy?: string;
  /** The batch this one retried. */
  retryOf?: string;
  /** The schedule that started it. */
  scheduleId?: string;
  /** It covers part of the fleet (named projects, a label, a retry of the failed ones), not --all. */
  partial?: true;
  /** Its class in the fair queue (fair-queue.ts); absent: normal. */
  priority?: 'high' | 'low';
  /** Whose share its calls count to, when not createdBy (a schedule's batch: the schedule's owner). */
  requester?: string;
  results?: ProjectOutcome[];
}

export const BATCH_STATES = ['running', 'succeeded', 'failed', 'cancelled'] as const;
export type BatchState = (typeof BATCH_STATES)[number];

export function isBatchOver(batch: Pick<BatchView, 'state'>): boolean {
  return batch.state !== 'running';
}

/** A batch summary: the batch without its per-project results (lists, cancel answers). */
export function withoutResults({ results: _results, ...batch }: BatchView): Omit<BatchView, 'results'> {
  return batch;
}

/** One recorded outcome's message (batch-messages.ts), with the batch it belongs to. */
export interface BatchProgress extends BatchProgressMessage {
  batchId: string;
}

export class BatchStore {
  readonly #scripts: Scripts;
  /** Called once a record ends the batch (batch-notices.ts publishes the webhook events); never throws. */
  onBatchEnd: ((batchId: string) => Promise<void>) | undefined;

  constructor(
    readonly redis: Redis,
    readonly keys: Keys,
  ) {
    this.#scripts = scriptsOn(redis);
  }

  eventsChannel(batchId: string): string {
    return this.keys.batchEvents(batchId);
  }

  /** A message on eventsChannel (published by lua/batch-record.lua), as progress; undefined for one of another form. */
  parseProgress(batchId: string, message: string): BatchProgress | undefined {
    const progress = batchProgressMessage.decode(message);
    return progress && { batchId, ...progress };
  }

  /** These projects' outcomes as stored (JSON text; null: none yet), never parsed. One round trip. */
  outcomeTexts(batchId: string, projectIds: string[]): Promise<(string | null)[]> {
    return this.redis.hmget(this.keys.batchResults(batchId), ...projectIds);
  }

  /** The projects with a recorded outcome (their ids only). */
  recordedIds(batchId: string): Promise<string[]> {
    return this.redis.hkeys(this.keys.batchResults(batchId));
  }

  /**
   * Each recorded project's status, without reading the outcomes (which may be
   * a MiB each). A batch recorded before the status index existed is indexed
   * once, reading its outcomes a few at a time.
   */
  async statuses(batchId: string): Promise<Map<string, ProjectOutcome['status']>> {
    const [indexed, recorded] = await Promise.all([
      this.redis.hlen(this.keys.batchStatuses(batchId)),
      this.redis.hlen(this.keys.batchResults(batchId)),
    ]);
    if (indexed < recorded) {
      let cursor = '0';
      do {
        const [next, flat] = await this.redis.hscan(this.keys.batchResults(batchId), cursor, 'COUNT', 4);
        const fields: string[] = [];
        for (let i = 0; i + 1 < flat.length; i += 2)
          fields.push(flat[i]!, (JSON.parse(flat[i + 1]!) as ProjectOutcome).status);
        if (fields.length > 0) await this.redis.hset(this.keys.batchStatuses(batchId), ...fields);
        cursor = next;
      } while (cursor !== '0');
    }
    const flat = await this.redis.hgetall(this.keys.batchStatuses(batchId));
    return new Map(Object.entries(flat) as [string, ProjectOutcome['status']][]);
  }

  /** The recorded outcomes of these projects (those without one are left out). One round trip. */
  async outcomesOf(batchId: string, projectIds: string[]): Promise<ProjectOutcome[]> {
    const raw = await this.redis.hmget(this.keys.batchResults(batchId), ...projectIds);
    return raw.flatMap((value) => (value ? [JSON.parse(value) as ProjectOutcome] : []));
  }

  /**
   * Records a new batch with its project list (kept for retry, cancel, diff
   * and export) and its audit entry, in the same MULTI.
   */
  async create(
    pluginId: string,
    projectIds: string[],
    createdBy: string,
    audit?: AuditInput,
    extra: {
      retryOf?: string;
      scheduleId?: string;
      partial?: boolean;
      priority?: 'high' | 'normal' | 'low';
      requester?: string;
    } = {},
  ): Promise<BatchView> {
    const batchId = `batch_${randomUUID()}`;
    const createdAt = new Date().toISOString();
    const hash: Record<string, string> = {
      id: batchId,
      pluginId,
      total: String(projectIds.length),
      succeeded: '0',
      failed: '0',
      cancelled: '0',
      createdAt,
      createdBy,
      ...(projectIds.length === 0 ? { finishedAt: createdAt } : {}),
      ...(extra.retryOf ? { retryOf: extra.retryOf } : {}),
      ...(extra.scheduleId ? { scheduleId: extra.scheduleId } : {}),
      ...(extra.partial ? { partial: '1' } : {}),
      ...(extra.priority && extra.priority !== 'normal' ? { priority: extra.priority } : {}),
      ...(extra.requester && extra.requester !== createdBy ? { requester: extra.requester } : {}),
    };
    const multi = this.redis
      .multi()
      .hset(this.keys.batch(batchId), hash)
      .zadd(this.keys.batches, Date.parse(createdAt), batchId);
    for (let start = 0; start < projectIds.length; start += 1_000)
      multi.rpush(this.keys.batchProjects(batchId), ...projectIds.slice(start, start + 1_000));
    if (audit) auditInto(multi, this.keys, { ...audit, target: batchId });
    await multi.exec();
    return toView(hash);
  }

  /** The batch's projects in the order they were queued. */
  async projectIds(batchId: string): Promise<string[]> {
    return this.redis.lrange(this.keys.batchProjects(batchId), 0, -1);
  }

  /**
   * Marks the batch cancelled (first request wins); false when it already was.
   * The call-state token moves after the mark (again on a repeated request,
   * in case the first one stopped between the two): a job's next call sees it (job-call-state.ts).
   */
  async markCancelled(batchId: string, actor: string): Promise<boolean> {
    const first = await this.redis.hsetnx(this.keys.batch(batchId), 'cancelledAt', new Date().toISOString());
    const multi = this.redis.multi();
    if (first === 1) multi.hset(this.keys.batch(batchId), 'cancelledBy', actor);
    await markCallStateChanged(multi, this.keys).exec();
    return first === 1;
  }

  async isCancelled(batchId: string): Promise<boolean> {
    return (await this.redis.hexists(this.keys.batch(batchId), 'cancelledAt')) === 1;
  }

  /**
   * The outcomes in project order, `size` projects per chunk (a project
   * without an outcome yet comes as 'pending'): export and diff read big
   * batches through this without holding them whole.
   */
  async *outcomeChunks(batchId: string, size = 500): AsyncGenerator<[string, ProjectOutcome | 'pending'][]> {
    const length = await this.redis.llen(this.keys.batchProjects(batchId));
    for (let start = 0; start < length; start += size) {
      const ids = await this.redis.lrange(this.keys.batchProjects(batchId), start, start + size - 1);
      if (ids.length === 0) return;
      const raw = await this.redis.hmget(this.keys.batchResults(batchId), ...ids);
      yield ids.map((id, index) => {
        const value = raw[index];
        return [id, value ? (JSON.parse(value) as ProjectOutcome) : 'pending'];
      });
    }
  }

  /** Records one project's outcome; false when it was already recorded. */
  async record(batchId: string, pluginId: string, outcome: ProjectOutcome): Promise<boolean> {
    return (await this.recordAll(batchId, pluginId, [outcome])) === 1;
  }

  /**
   * After a new record, or a job taken again: when the batch has ended, tells
   * onBatchEnd (which produces each event once, and again after a crash cut it short).
   */
  async announceIfEnded(batchId: string): Promise<void> {
    if (!this.onBatchEnd) return;
    if ((await this.redis.hget(this.keys.batch(batchId), 'finishedAt')) === null) return;
    await this.onBatchEnd(batchId).catch(() => {});
  }

  /**
   * Records several outcomes of one batch in one script call (one write, one
   * progress message), each still counted once; how many were new.
   */
  async recordAll(batchId: string, pluginId: string, outcomes: readonly ProjectOutcome[]): Promise<number> {
    if (outcomes.length === 0) return 0;
    const now = new Date().toISOString();
    const args: string[] = [this.eventsChannel(batchId), now, pluginId];
    for (const outcome of outcomes) {
      args.push(
        outcome.projectId,
        JSON.stringify(outcome),
        outcome.status,
        outcome.status === 'failed' ? JSON.stringify({ batchId, at: now } satisfies FailedLatest) : '',
        outcome.status === 'succeeded' ? JSON.stringify(storedFleetEntry(batchId, now, outcome)) : '',
        fleetIdKey(outcome.projectId),
      );
    }
    const [recorded, ended] = await this.#scripts.batchRecord(
      [
        this.keys.batch(batchId),
        this.keys.batchResults(batchId),
        this.keys.latestInspection,
        this.keys.fleetFacts(pluginId),
        this.keys.fleetIndex(pluginId),
        this.keys.batchStatuses(batchId),
      ],
      ...args,
    );
    if (recorded > 0 && ended === 1) await this.onBatchEnd?.(batchId).catch(() => {});
    return recorded;
  }

  /** The plugin's fleet: each project's latest successful result (fleet-facts.ts), read in slices. */
  async fleet(pluginId: string, signal?: AbortSignal): Promise<FleetRow[]> {
    const rows: FleetRow[] = [];
    let cursor = '0';
    do {
      signal?.throwIfAborted();
      const [next, flat] = await this.redis.hscan(this.keys.fleetFacts(pluginId), cursor, 'COUNT', 1_000);
      for (let i = 0; i + 1 < flat.length; i += 2) rows.push(fleetRow(flat[i]!, flat[i + 1]!));
      cursor = next;
    } while (cursor !== '0');
    return rows;
  }

  /**
   * The fleet's rows after project `after` (none: from the first), in page
   * order (fleet-facts.ts compareProjectIds), at most `count` of them: read
   * through the plugin's fleet index, so a slice costs its own size, not the
   * fleet's. `last`: the slice's last project id (where the next one starts);
   * `done` once the index has nothing after it.
   */
  async fleetSlice(
    pluginId: string,
    after: string | undefined,
    count: number,
  ): Promise<{ rows: FleetRow[]; last?: string; done: boolean }> {
    await this.#indexFleet(pluginId);
    const from = after === undefined ? '-' : `(${fleetIdKey(after)}`;
    const members = await this.redis.zrangebylex(
      this.keys.fleetIndex(pluginId),
      from,
      '+',
      'LIMIT',
      0,
      count,
    );
    if (members.length === 0) return { rows: [], done: true };
    const ids = members.map(projectIdOfKey);
    const raw = await this.redis.hmget(this.keys.fleetFacts(pluginId), ...ids);
    const rows = ids.flatMap((projectId, index) => {
      const entry = raw[index];
      return entry ? [fleetRow(projectId, entry)] : [];
    });
    return { rows, last: ids.at(-1)!, done: members.length < count };
  }

  /**
   * Fleet facts recorded before the index existed are indexed once: the
   * index holds every id of the hash (both written by batch-record.lua, and
   * neither ever loses one), so fewer members than fields means some are
   * missing. Two O(1) reads when it is whole.
   */
  async #indexFleet(pluginId: string): Promise<void> {
    const [indexed, stored] = await Promise.all([
      this.redis.zcard(this.keys.fleetIndex(pluginId)),
      this.redis.hlen(this.keys.fleetFacts(pluginId)),
    ]);
    if (indexed >= stored) return;
    let cursor = '0';
    do {
      const [next, flat] = await this.redis.hscan(this.keys.fleetFacts(pluginId), cursor, 'COUNT', 1_000);
      const members = flat.flatMap((field, index) => (index % 2 === 0 ? [0, fleetIdKey(field)] : []));
      if (members.length > 0) await this.redis.zadd(this.keys.fleetIndex(pluginId), ...members);
      cursor = next;
    } while (cursor !== '0');
  }

  /** The projects among `projectIds` without a recorded outcome yet. One round trip. */
  async unrecorded(batchId: string, projectIds: string[]): Promise<string[]> {
    const recorded = await this.redis.hmget(this.keys.batchResults(batchId), ...projectIds);
    return projectIds.filter((_id, index) => recorded[index] === null);
  }

  async get(batchId: string, options: { results?: boolean } = {}): Promise<BatchView | undefined> {
    const hash = await this.redis.hgetall(this.keys.batch(batchId));
    if (!hash.id) return undefined;
    const view = toView(hash);
    if (options.results !== false) {
      const raw = await this.redis.hvals(this.keys.batchResults(batchId));
      view.results = raw
        .map((value) => JSON.parse(value) as ProjectOutcome)
        .sort((a, b) => a.projectId.localeCompare(b.projectId));
    }
    return view;
  }

  /** Newest first, filtered by state and plugin, one page (pages.ts). */
  list(query: BatchQuery = {}): Promise<Page<BatchView>> {
    return sortedSetPage(
      this.redis,
      this.keys.batches,
      query,
      async (ids) => {
        const pipeline = this.redis.pipeline();
        for (const id of ids) pipeline.hgetall(this.keys.batch(id));
        const rows = (await pipeline.exec()) ?? [];
        return rows.map(([, hash]) => {
          const fields = hash as Record<string, string> | null;
          return fields?.id ? toView(fields) : undefined;
        });
      },
      (batch) =>
        (query.state === undefined || batch.state === query.state) &&
        (query.pluginId === undefined || batch.pluginId === query.pluginId) &&
        (query.scheduleId === undefined || batch.scheduleId === query.scheduleId),
    );
  }

  /**
   * One project's results of a plugin across the kept batches, newest first:
   * at most `limit` of the plugin's batches, each with the project's outcome
   * (`pending` while the batch has none; batches without the project left out).
   * Read from the batches themselves: retention bounds it, no extra write.
   */
  async history(pluginId: string, projectId: string, limit: number): Promise<HistoryEntry[]> {
    const ids = await this.redis.zrevrange(this.keys.batches, 0, -1);
    const heads = this.redis.pipeline();
    for (const id of ids) heads.hmget(this.keys.batch(id), 'pluginId', 'createdAt');
    const mine = ((await heads.exec()) ?? [])
      .map(([, fields], index) => ({ batchId: ids[index]!, fields: fields as (string | null)[] }))
      .filter(({ fields }) => fields[0] === pluginId)
      .slice(0, limit);
    const reads = this.redis.pipeline();
    for (const { batchId } of mine) {
      reads.hget(this.keys.batchResults(batchId), projectId);
      reads.lpos(this.keys.batchProjects(batchId), projectId);
    }
    const answers = (await reads.exec()) ?? [];
    return mine.flatMap(({ batchId, fields }, index) => {
      const raw = answers[index * 2]?.[1] as string | null;
      const position = answers[index * 2 + 1]?.[1] as number | null;
      const at = fields[1] ?? '';
      if (raw) return [historyEntry(batchId, at, JSON.parse(raw) as ProjectOutcome)];
      return position !== null && position !== undefined
        ? [{ batchId, at, status: 'pending' as const, facts: {}, warnings: [] }]
        : [];
    });
  }

  /**
   * What `to`'s projects were as of batch `from`: each one's outcome there
   * (pending when it has none yet) or, where `from` did not cover it, its
   * newest recorded outcome in an older kept batch of the plugin (none:
   * never inspected). So a batch over part of the fleet, or the full one
   * after it, compares each project with its own previous result, and the
   * projects `to` did not cover are not compared at all.
   */
  async outcomesAsOf(
    from: BatchView,
    projectIds: string[],
  ): Promise<Map<string, ProjectOutcome | 'pending'>> {
    const outcomes = new Map<string, ProjectOutcome | 'pending'>();
    const covered = new Set(await this.projectIds(from.batchId));
    await this.#readOutcomes(
      from.batchId,
      projectIds.filter((id) => covered.has(id)),
      outcomes,
      true,
    );
    let missing = projectIds.filter((id) => !covered.has(id));
    let older: BatchView | undefined = from;
    while (missing.length > 0 && (older = await this.previous(older))) {
      await this.#readOutcomes(older.batchId, missing, outcomes, false);
      missing = missing.filter((id) => !outcomes.has(id));
    }
    return outcomes;
  }

  /** Reads these projects' recorded outcomes into `into`, 500 a round trip; with `pending`, the rest as pending. */
  async #readOutcomes(
    batchId: string,
    projectIds: string[],
    into: Map<string, ProjectOutcome | 'pending'>,
    pending: boolean,
  ): Promise<void> {
    for (let start = 0; start < projectIds.length; start += 500) {
      const ids = projectIds.slice(start, start + 500);
      const texts = await this.outcomeTexts(batchId, ids);
      ids.forEach((id, index) => {
        const text = texts[index];
        if (text) into.set(id, JSON.parse(text) as ProjectOutcome);
        else if (pending) into.set(id, 'pending');
      });
    }
  }

  /** The newest batch of the same plugin created before this one (what "compare with the previous" means). */
  async previous(batch: BatchView): Promise<BatchView | undefined> {
    let cursor: string | undefined;
    const before = encodeCursor({ s: Date.parse(batch.createdAt), m: batch.batchId });
    for (;;) {
      const page = await this.list({ pluginId: batch.pluginId, limit: 1, cursor: cursor ?? before });
      if (page.items[0]) return page.items[0];
      if (!page.nextCursor) return undefined;
      cursor = page.nextCursor;
    }
  }

  /**
   * The project's latest inspection by the plugin (not a cancelled one): its
   * batch, when it was recorded and the actions it advertised. Recorded as
   * lua/batch-record.lua says: a latest-inspection field when it failed (a
   * full outcome when written by an earlier version), else the fleet entry.
   */
  async latest(pluginId: string, projectId: string): Promise<LatestInspection | undefined> {
    const [latest, fleet] = await Promise.all([
      this.redis.hget(this.keys.latestInspection, `${pluginId}/${projectId}`),
      this.redis.hget(this.keys.fleetFacts(pluginId), projectId),
    ]);
    return latestOf(latest, fleet);
  }

  /** latest() of many projects: two HMGETs a slice of 500, not two round trips a project. */
  async latestOfEach(
    pluginId: string,
    projectIds: readonly string[],
  ): Promise<(LatestInspection | undefined)[]> {
    const found: (LatestInspection | undefined)[] = [];
    for (let start = 0; start < projectIds.length; start += 500) {
      const ids = projectIds.slice(start, start + 500);
      const [latest, fleet] = await Promise.all([
        this.redis.hmget(this.keys.latestInspection, ...ids.map((projectId) => `${pluginId}/${projectId}`)),
        this.redis.hmget(this.keys.fleetFacts(pluginId), ...ids),
      ]);
      ids.forEach((_, index) => found.push(latestOf(latest[index] ?? null, fleet[index] ?? null)));
    }
    return found;
  }

  /**
   * Deletes each plugin's finished batches that its policy no longer keeps: a
   * batch stays while it is one of the plugin's newest `keep` finished ones
   * (at least KEEP_PER_PLUGIN, so `batch diff` and the web UI always have a
   * previous batch) or was created after `cutoffMs`. Running batches stay.
   * The fleet view (`facts`) is kept apart and never expires with them.
   * Returns how many were deleted, by plugin.
   */
  async deleteUnkept(
    policyOf: (pluginId: string) => { keep: number; cutoffMs: number },
  ): Promise<Map<string, number>> {
    const kept = new Map<string, number>();
    const deleted = new Map<string, number>();
    // Newest first, so the first finished batches seen of each plugin are the ones kept.
    for (const id of await this.redis.zrevrange(this.keys.batches, 0, -1)) {
      const [pluginId, finishedAt, createdAt] = await this.redis.hmget(
        this.keys.batch(id),
        'pluginId',
        'finishedAt',
        'createdAt',
      );
      if (!finishedAt) continue;
      const plugin = pluginId ?? '';
      const policy = policyOf(plugin);
      const seen = kept.get(plugin) ?? 0;
      if (seen < Math.max(KEEP_PER_PLUGIN, policy.keep)) {
        kept.set(plugin, seen + 1);
        continue;
      }
      if (Date.parse(createdAt ?? '') > policy.cutoffMs) continue;
      await this.redis
        .multi()
        .del(
          this.keys.batch(id),
          this.keys.batchResults(id),
          this.keys.batchStatuses(id),
          this.keys.batchProjects(id),
        )
        .zrem(this.keys.batches, id)
        .exec();
      deleted.set(plugin, (deleted.get(plugin) ?? 0) + 1);
    }
    return deleted;
  }

  /** deleteUnkept with one cut-off and count for every plugin. */
  async deleteFinishedBefore(cutoffMs: number, keepPerPlugin = KEEP_PER_PLUGIN): Promise<number> {
    const deleted = await this.deleteUnkept(() => ({ keep: keepPerPlugin, cutoffMs }));
    return [...deleted.values()].reduce((sum, count) => sum + count, 0);
  }
}

/** Retention keeps at least this many finished batches per plugin, however old. */
export const KEEP_PER_PLUGIN = 2;

export interface BatchQuery extends PageRequest {
  state?: BatchState;
  pluginId?: string;
  /** Only the batches this schedule started. */
  scheduleId?: string;
}

function toView(hash: Record<string, string>): BatchView {
  const total = Number(hash.total ?? 0);
  const succeeded = Number(hash.succeeded ?? 0);
  const failed = Number(hash.failed ?? 0);
  const cancelled = Number(hash.cancelled ?? 0);
  return {
    batchId: hash.id!,
    pluginId: hash.pluginId ?? '',
    state: stateOf(hash, failed),
    total,
    pending: Math.max(0, total - succeeded - failed - cancelled),
    succeeded,
    failed,
    cancelled,
    createdAt: hash.createdAt ?? '',
    createdBy: hash.createdBy ?? '',
    ...(hash.finishedAt ? { finishedAt: hash.finishedAt } : {}),
    ...(hash.cancelledAt ? { cancelledAt: hash.cancelledAt, cancelledBy: hash.cancelledBy ?? '' } : {}),
    ...(hash.retryOf ? { retryOf: hash.retryOf } : {}),
    ...(hash.scheduleId ? { scheduleId: hash.scheduleId } : {}),
    ...(hash.partial ? { partial: true as const } : {}),
    ...(hash.priority === 'high' || hash.priority === 'low' ? { priority: hash.priority } : {}),
    ...(hash.requester ? { requester: hash.requester } : {}),
  };
}

function stateOf(hash: Record<string, string>, failed: number): BatchState {
  if (!hash.finishedAt) return 'running';
  if (hash.cancelledAt) return 'cancelled';
  return failed > 0 ? 'failed' : 'succeeded';
}

/** A project's latest inspection of a plugin: what `actions` reads. */
export interface LatestInspection {
  batchId: string;
  at: string;
  actions: InspectResult['actions'];
}

/** The latest-inspection field of a failed inspection. */
interface FailedLatest {
  batchId: string;
  at: string;
}

/** A fleet-facts field: the row, and the actions of that (latest successful) inspection when it advertised any. */
type StoredFleetEntry = Omit<FleetRow, 'projectId'> & { actions?: InspectResult['actions'] };

function storedFleetEntry(batchId: string, at: string, outcome: ProjectOutcome): StoredFleetEntry {
  const actions = outcome.result?.actions ?? [];
  return { ...fleetEntry(batchId, at, outcome), ...(actions.length > 0 ? { actions } : {}) };
}

function fleetRow(projectId: string, raw: string): FleetRow {
  const { batchId, at, facts } = JSON.parse(raw) as StoredFleetEntry;
  return { projectId, batchId, at, facts };
}

function fleetEntry(batchId: string, at: string, outcome: ProjectOutcome): Omit<FleetRow, 'projectId'> {
  const facts: FleetRow['facts'] = {};
  for (const fact of outcome.result?.facts ?? [])
    facts[fact.id] =
      fact.warning === undefined ? { value: fact.value } : { value: fact.value, warning: fact.warning };
  return { batchId, at, facts };
}

/** One batch's result for one project (`project history`). */
export interface HistoryEntry {
  batchId: string;
  /** When the batch was created. */
  at: string;
  status: ProjectOutcome['status'] | 'pending';
  /** The inspection's own one-line summary, where it succeeded. */
  summary?: string;
  facts: FleetRow['facts'];
  warnings: string[];
  error?: { code: string; message: string };
}

function historyEntry(batchId: string, at: string, outcome: ProjectOutcome): HistoryEntry {
  return {
    batchId,
    at,
    status: outcome.status,
    ...(outcome.result ? { summary: outcome.result.summary } : {}),
    facts: fleetEntry(batchId, at, outcome).facts,
    warnings: outcome.result?.warnings ?? [],
    ...(outcome.error ? { error: outcome.error } : {}),
  };
}

/** A latest-inspection field (a failed one) wins over the fleet entry (the latest successful one). */
function latestOf(latest: string | null, fleet: string | null): LatestInspection | undefined {
  if (latest) {
    const entry = JSON.parse(latest) as FailedLatest & Partial<ProjectOutcome>;
    return { batchId: entry.batchId, at: entry.at, actions: entry.result?.actions ?? [] };
  }
  if (!fleet) return undefined;
  const entry = JSON.parse(fleet) as StoredFleetEntry;
  return { batchId: entry.batchId, at: entry.at, actions: entry.actions ?? [] };
}
