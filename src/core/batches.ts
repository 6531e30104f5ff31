// Inspection batches: one batch → one job per project, counts, per-project
// results and the latest result per plugin × project. A result is recorded
// once per project (HSETNX in lua/batch-record.lua), so a job that runs again after
// its worker died can never count twice.
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { InspectResult } from '@switchyard/plugin-sdk/protocol';
import { auditInto, type AuditInput } from './audit.js';
import type { Keys } from './keys.js';
import { scriptsOn, type Scripts } from './scripts.js';

export interface ProjectOutcome {
  projectId: string;
  status: 'succeeded' | 'failed';
  result?: InspectResult;
  error?: { code: string; message: string };
}

/** docs/CLI.md's document for `inspect --json` and `batch show`. */
export interface BatchView {
  batchId: string;
  pluginId: string;
  state: 'running' | 'finished';
  total: number;
  pending: number;
  succeeded: number;
  failed: number;
  createdAt: string;
  createdBy: string;
  finishedAt?: string;
  results?: ProjectOutcome[];
}

export interface BatchProgress {
  batchId: string;
  projectId: string;
  status: ProjectOutcome['status'];
  total: number;
  succeeded: number;
  failed: number;
  finished: boolean;
}

export class BatchStore {
  readonly #scripts: Scripts;

  constructor(
    readonly redis: Redis,
    readonly keys: Keys,
  ) {
    this.#scripts = scriptsOn(redis);
  }

  eventsChannel(batchId: string): string {
    return this.keys.batchEvents(batchId);
  }

  /** Records a new batch (and its audit entry, in the same MULTI). */
  async create(pluginId: string, total: number, createdBy: string, audit?: AuditInput): Promise<BatchView> {
    const batchId = `batch_${randomUUID()}`;
    const createdAt = new Date();
    const multi = this.redis
      .multi()
      .hset(this.keys.batch(batchId), {
        id: batchId,
        pluginId,
        total: String(total),
        succeeded: '0',
        failed: '0',
        createdAt: createdAt.toISOString(),
        createdBy,
        ...(total === 0 ? { finishedAt: createdAt.toISOString() } : {}),
      })
      .zadd(this.keys.batches, createdAt.getTime(), batchId);
    if (audit) auditInto(multi, this.keys, { ...audit, target: batchId });
    await multi.exec();
    return {
      batchId,
      pluginId,
      state: total === 0 ? 'finished' : 'running',
      total,
      pending: total,
      succeeded: 0,
      failed: 0,
      createdAt: createdAt.toISOString(),
      createdBy,
      ...(total === 0 ? { finishedAt: createdAt.toISOString() } : {}),
    };
  }

  /** Records one project's outcome; false when it was already recorded. */
  async record(batchId: string, pluginId: string, outcome: ProjectOutcome): Promise<boolean> {
    const now = new Date().toISOString();
    const recorded = await this.#scripts.batchRecord(
      [this.keys.batch(batchId), this.keys.batchResults(batchId), this.keys.latestInspection],
      outcome.projectId,
      JSON.stringify(outcome),
      outcome.status,
      `${pluginId}/${outcome.projectId}`,
      JSON.stringify({ batchId, at: now, ...outcome }),
      this.eventsChannel(batchId),
      now,
    );
    return recorded === 1;
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

  async list(limit = 20): Promise<BatchView[]> {
    const ids = await this.redis.zrevrange(this.keys.batches, 0, limit - 1);
    const pipeline = this.redis.pipeline();
    for (const id of ids) pipeline.hgetall(this.keys.batch(id));
    const rows = (await pipeline.exec()) ?? [];
    return rows
      .map(([, hash]) => hash as Record<string, string>)
      .filter((hash) => hash?.id)
      .map(toView);
  }

  async latest(
    pluginId: string,
    projectId: string,
  ): Promise<(ProjectOutcome & { batchId: string; at: string }) | undefined> {
    const raw = await this.redis.hget(this.keys.latestInspection, `${pluginId}/${projectId}`);
    return raw ? JSON.parse(raw) : undefined;
  }

  /** Deletes finished batches older than the cut-off; returns how many. */
  async deleteFinishedBefore(cutoffMs: number): Promise<number> {
    const ids = await this.redis.zrangebyscore(this.keys.batches, 0, cutoffMs);
    let deleted = 0;
    for (const id of ids) {
      const finishedAt = await this.redis.hget(this.keys.batch(id), 'finishedAt');
      if (!finishedAt) continue;
      await this.redis
        .multi()
        .del(this.keys.batch(id), this.keys.batchResults(id))
        .zrem(this.keys.batches, id)
        .exec();
      deleted += 1;
    }
    return deleted;
  }
}

function toView(hash: Record<string, string>): BatchView {
  const total = Number(hash.total ?? 0);
  const succeeded = Number(hash.succeeded ?? 0);
  const failed = Number(hash.failed ?? 0);
  return {
    batchId: hash.id!,
    pluginId: hash.pluginId ?? '',
    state: hash.finishedAt ? 'finished' : 'running',
    total,
    pending: Math.max(0, total - succeeded - failed),
    succeeded,
    failed,
    createdAt: hash.createdAt ?? '',
    createdBy: hash.createdBy ?? '',
    ...(hash.finishedAt ? { finishedAt: hash.finishedAt } : {}),
  };
}
