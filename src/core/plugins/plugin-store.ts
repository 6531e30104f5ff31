// Plugin registry in Redis. Each plugin is one JSON value in a hash, so a
// reader sees a whole record or none of it; changes that belong together
// (record + audit) go in one optimistic MULTI, retried on conflict. Health and
// logs are written here only (setHealth, recordOutcome).
import { randomBytes } from 'node:crypto';
import type { ChainableCommander, Redis } from 'ioredis';
import type { Capability, Scope } from '@switchyard/plugin-sdk/protocol';
import { auditInto, type AuditInput } from '../access/index.js';
import type { Keys } from '../redis/index.js';
import { WatchedKey, markCallStateChanged } from '../redis/index.js';
import type { TimeLimitSettings } from './time-limits.js';
import type { ConfinementSettings } from './confinement-settings.js';
import type { RetentionSettings } from './retention-policy.js';
import type { CallCaps } from './plugin-caps.js';
import type { PackageEntry } from './package-tree.js';

export type TrustState = 'untrusted' | 'trusted' | 'changed';
export type HealthState = 'unknown' | 'healthy' | 'degraded' | 'unhealthy';

export interface PluginRecord {
  id: string;
  name: string;
  version: string;
  protocolVersion: string;
  capabilities: Capability[];
  requestedScopes: Scope[];
  executable: string;
  arguments: string[];
  packageDir: string;
  manifestPath: string;
  /** Fingerprint seen by the last discovery (null when it could not be computed). */
  fingerprint: string | null;
  /** Tree digest of the whole package seen by the last discovery (package-tree.ts). */
  treeDigest?: string;
  /** Every entry of the package seen by the last discovery: what the review shows. */
  files?: PackageEntry[];
  available: boolean;
  error?: string;
  protocolMismatch: boolean;
  trust: TrustState;
  trustedFingerprint?: string | undefined;
  /** The tree digest reviewed with `trustedFingerprint` (absent: trusted before whole-package review). */
  trustedTreeDigest?: string;
  /** The entries that digest covers: what was reviewed, and what each call's copy holds. */
  trustedFiles?: PackageEntry[];
  /** While `trust` is `changed`: the package files that differ from the trusted ones (when known). */
  changedFiles?: string[] | undefined;
  trustedBy?: string;
  trustedAt?: string;
  /**
   * While `trust` is `changed`: every host whose disk showed bytes other than
   * the trusted ones and has not seen the trusted ones since (a record written
   * before this was a list holds one host name).
   */
  changedOn?: string[] | string | undefined;
  enabled: boolean;
  grantedScopes: Scope[];
  discoveredAt: string;
  /** Host policy set by an admin (`plugin set`); unset limits are the defaults (time-limits.ts). */
  timeLimits?: TimeLimitSettings;
  /** Kernel confinement policy set by an admin or at trust (confinement-settings.ts). */
  confinement?: ConfinementSettings;
  /** How long its finished batches are kept (retention-policy.ts); unset: the defaults. */
  retention?: RetentionSettings;
  /** Installation-wide caps on its calls: at once, per second or minute (plugin-caps.ts). */
  caps?: CallCaps;
}

export interface HealthRecord {
  health: HealthState;
  lastError?: string;
  checkedAt?: string;
}

export interface LogEntry {
  at: string;
  source: 'stderr' | 'host';
  line: string;
  /** Unique per entry: what a follower has already printed. */
  id?: string;
  /** The operation whose call wrote it. */
  operationId?: string;
}

export const LOG_ENTRIES_KEPT = 1_000;
/** An operation keeps the last this many lines of its call (PROTOCOL §9.6's per-call bound). */
export const OPERATION_LOG_LINES = 200;

const entryIdPrefix = `${process.pid.toString(36)}.${randomBytes(3).toString('hex')}`;
let entryCount = 0;

const HEALTH_CACHE_MS = 2_000;

/** What `mutate` asks of a change: the new record (null deletes it), its audit entries, a value to return. */
export type PluginChange<T> = (current: PluginRecord | undefined) => {
  next?: PluginRecord | null;
  audit?: AuditInput[];
  value: T;
};

export class PluginStore {
  readonly #records: WatchedKey;
  readonly #healthSeen = new Map<string, { record: HealthRecord; until: number }>();

  constructor(
    readonly redis: Redis,
    readonly keys: Keys,
    /** Who the audit names when this process sees a plugin's health change. */
    readonly actor = 'switchyard',
  ) {
    this.#records = new WatchedKey(redis, keys.plugins, 'the plugin registry');
  }

  async close(): Promise<void> {
    await this.#records.close();
  }

  async get(id: string): Promise<PluginRecord | undefined> {
    const raw = await this.redis.hget(this.keys.plugins, id);
    return raw ? (JSON.parse(raw) as PluginRecord) : undefined;
  }

  async all(): Promise<PluginRecord[]> {
    const raw = await this.redis.hvals(this.keys.plugins);
    return raw.map((value) => JSON.parse(value) as PluginRecord).sort((a, b) => a.id.localeCompare(b.id));
  }

  async health(id: string): Promise<HealthRecord> {
    const raw = await this.redis.hget(this.keys.pluginHealth, id);
    return raw ? (JSON.parse(raw) as HealthRecord) : { health: 'unknown' };
  }

  async allHealth(): Promise<Map<string, HealthRecord>> {
    const raw = await this.redis.hgetall(this.keys.pluginHealth);
    return new Map(Object.entries(raw).map(([id, value]) => [id, JSON.parse(value) as HealthRecord]));
  }

  /**
   * The only writer of a plugin's health: stores it, with new log entries in
   * the same MULTI, and with one `plugin.health` audit entry when its state
   * changed from `from` (the audit keeps changes, not every check).
   */
  async setHealth(
    id: string,
    health: HealthRecord,
    logs: LogEntry[] = [],
    from?: HealthState,
  ): Promise<void> {
    this.#healthSeen.set(id, { record: health, until: Date.now() + HEALTH_CACHE_MS });
    const multi = this.redis.multi().hset(this.keys.pluginHealth, id, JSON.stringify(health));
    if (from !== undefined && from !== health.health)
      auditInto(multi, this.keys, {
        actor: this.actor,
        action: 'plugin.health',
        target: id,
        detail: { from, to: health.health, ...(health.lastError ? { error: health.lastError } : {}) },
      });
    this.#appendLogs(multi, id, logs);
    await multi.exec();
  }

  /**
   * What a call leaves behind: its log entries, and the health it shows when
   * given (undefined leaves health as it was). Health is written when it
   * changed, or on every call that is not healthy (its checkedAt moves).
   */
  async recordOutcome(id: string, health: HealthRecord | undefined, logs: LogEntry[]): Promise<void> {
    const at = new Date().toISOString();
    if (health) {
      const previous = await this.#knownHealth(id);
      const changed = previous.health !== health.health || previous.lastError !== health.lastError;
      if (!changed && logs.length === 0) return;
      if (changed || health.health !== 'healthy')
        return this.setHealth(id, { ...health, checkedAt: at }, logs, previous.health);
      // Unchanged and healthy: the cache keeps what we know without the write.
      this.#healthSeen.set(id, { record: health, until: Date.now() + HEALTH_CACHE_MS });
    }
    if (logs.length === 0) return;
    const multi = this.redis.multi();
    this.#appendLogs(multi, id, logs);
    await multi.exec();
  }

  /** The newest `limit` log entries (at most LOG_ENTRIES_KEPT), newest first. */
  async logs(id: string, limit: number): Promise<LogEntry[]> {
    const raw = await this.redis.lrange(
      this.keys.pluginLogs(id),
      0,
      Math.max(0, Math.min(limit, LOG_ENTRIES_KEPT) - 1),
    );
    return raw.map((value) => JSON.parse(value) as LogEntry);
  }

  /**
   * Lines of a running call, in one MULTI: into the plugin's log, and when the
   * call is an operation's, `operation` (tagged with it) into that operation's
   * log, which keeps its newest OPERATION_LOG_LINES.
   */
  async appendCallLogs(
    id: string,
    logs: LogEntry[],
    call: { operationId?: string; operation?: LogEntry[] } = {},
  ): Promise<void> {
    const { operationId, operation = [] } = call;
    const tag = (entries: LogEntry[]) =>
      entries.map((entry) => ({ ...entry, ...(operationId ? { operationId } : {}) }));
    if (logs.length === 0 && (!operationId || operation.length === 0)) return;
    const multi = this.redis.multi();
    this.#appendLogs(multi, id, tag(logs));
    if (operationId && operation.length > 0) {
      multi.rpush(
        this.keys.operationLogs(operationId),
        ...tag(operation).map((entry) => JSON.stringify(withId(entry))),
      );
      multi.ltrim(this.keys.operationLogs(operationId), -OPERATION_LOG_LINES, -1);
    }
    await multi.exec();
  }

  /** An operation's log entries, oldest first. */
  async operationLogs(operationId: string): Promise<LogEntry[]> {
    const raw = await this.redis.lrange(this.keys.operationLogs(operationId), 0, -1);
    return raw.map((value) => JSON.parse(value) as LogEntry);
  }

  /** Pushes the entries (each given an id: what a follower has printed) newest first. */
  #appendLogs(multi: ChainableCommander, id: string, logs: LogEntry[]): void {
    if (logs.length === 0) return;
    multi.lpush(this.keys.pluginLogs(id), ...logs.map((entry) => JSON.stringify(withId(entry))));
    multi.ltrim(this.keys.pluginLogs(id), 0, LOG_ENTRIES_KEPT - 1);
  }

  /**
   * The stored health, read at most every HEALTH_CACHE_MS per plugin: a
   * healthy call then costs no Redis round trip for health. Another process's
   * change is seen within that time.
   */
  async #knownHealth(id: string): Promise<HealthRecord> {
    const cached = this.#healthSeen.get(id);
    if (cached && cached.until > Date.now()) return cached.record;
    const record = await this.health(id);
    this.#healthSeen.set(id, { record, until: Date.now() + HEALTH_CACHE_MS });
    return record;
  }

  /**
   * Reads, changes and writes one record atomically with its audit entries.
   * `change` returns the new record (or undefined to leave it) and the audit
   * entries; it may run more than once when another writer raced us.
   */
  mutate<T>(id: string, change: PluginChange<T>): Promise<T> {
    return this.#records.transact(async (tx) => {
      const raw = await tx.hget(this.keys.plugins, id);
      const current = raw ? (JSON.parse(raw) as PluginRecord) : undefined;
      const { next, audit = [], value } = change(current);
      if (next === undefined && audit.length === 0) return { value };
      let multi = tx.multi();
      if (next === null) multi = multi.hdel(this.keys.plugins, id);
      else if (next !== undefined) multi = multi.hset(this.keys.plugins, id, JSON.stringify(next));
      // A batch job's cached read of this record (job-call-state.ts) is read again before its next call.
      if (next !== undefined) markCallStateChanged(multi, this.keys);
      for (const entry of audit) multi = auditInto(multi, this.keys, entry);
      return { multi, value };
    });
  }
}

function withId(entry: LogEntry): LogEntry {
  return entry.id ? entry : { ...entry, id: `${entryIdPrefix}.${(entryCount += 1).toString(36)}` };
}
