// The audit trail: an append-only Redis stream of every decision and its actor.
import type { ChainableCommander, Redis } from 'ioredis';
import type { Keys, Page, PageRequest } from '../redis/index.js';
import { redactDeep } from '../safety/index.js';
import { streamPage } from '../redis/index.js';

export interface AuditEntry {
  id: string;
  at: string;
  actor: string;
  action: string;
  target: string;
  detail: Record<string, unknown>;
}

export type AuditInput = Omit<AuditEntry, 'id' | 'at'>;

/** Appends to a MULTI so the entry lands atomically with the change it records. */
export function auditInto(multi: ChainableCommander, keys: Keys, entry: AuditInput): ChainableCommander {
  return multi.xadd(
    keys.audit,
    '*',
    'at',
    new Date().toISOString(),
    'actor',
    entry.actor,
    'action',
    entry.action,
    'target',
    entry.target,
    'detail',
    // Details can quote errors and plugin output (docs/PROTOCOL.md §10).
    JSON.stringify(redactDeep(entry.detail)),
  );
}

export async function appendAudit(redis: Redis, keys: Keys, entry: AuditInput): Promise<void> {
  await auditInto(redis.multi(), keys, entry).exec();
}

export async function readAudit(redis: Redis, keys: Keys, limit = 50): Promise<AuditEntry[]> {
  const rows = await redis.xrevrange(keys.audit, '+', '-', 'COUNT', limit);
  return rows.map(([id, fields]) => parseEntry(id, fields));
}

export interface AuditQuery extends PageRequest {
  actor?: string;
  /** Entries of this action or its kind (`plugin.` or `plugin` → every plugin decision; actionMatches). */
  action?: string;
  /** Leaves out the entries `action` would select with this (the web UI hides health checks). */
  excludeAction?: string;
  target?: string;
  /** Not older than this many milliseconds. */
  since?: number;
  /** Not newer than this time (epoch milliseconds). */
  until?: number;
}

/**
 * An action filter: `plugin.` (or `plugin`) selects every `plugin.*` action,
 * `plugin.trust` that one and its own `plugin.trust.*`; a name is matched whole
 * up to a dot, so `schedule` never selects `scheduler.*`.
 */
export function actionMatches(action: string, filter: string): boolean {
  if (filter.endsWith('.')) return action.startsWith(filter);
  return action === filter || action.startsWith(`${filter}.`);
}

/** Health checks write one audit entry per run; the web UI hides them unless asked. */
export const HEALTH_CHECK_ACTION = 'scheduler.health-checks';

/** Newest entries first, filtered, one page (pages.ts). */
export function queryAudit(redis: Redis, keys: Keys, query: AuditQuery = {}): Promise<Page<AuditEntry>> {
  const { actor, action, excludeAction, target, since, until } = query;
  return streamPage(
    redis,
    keys.audit,
    {
      limit: query.limit,
      cursor: query.cursor,
      sinceMs: since === undefined ? undefined : Date.now() - since,
      untilMs: until,
    },
    parseEntry,
    (entry) =>
      (actor === undefined || entry.actor === actor) &&
      (action === undefined || actionMatches(entry.action, action)) &&
      (excludeAction === undefined || !actionMatches(entry.action, excludeAction)) &&
      (target === undefined || entry.target === target),
  );
}

function parseEntry(id: string, fields: string[]): AuditEntry {
  const map = new Map<string, string>();
  for (let index = 0; index + 1 < fields.length; index += 2) map.set(fields[index]!, fields[index + 1]!);
  return {
    id,
    at: map.get('at') ?? '',
    actor: map.get('actor') ?? '',
    action: map.get('action') ?? '',
    target: map.get('target') ?? '',
    detail: JSON.parse(map.get('detail') ?? '{}') as Record<string, unknown>,
  };
}
