// Plugin application services: refresh, list, show, trust, enable, disable,
// health, logs, and the supervised calls (inspect, operate). Every front (CLI,
// api, worker, scheduler) goes through these; no rule is written elsewhere.
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import {
  MAX_MANIFEST_BYTES,
  SCOPES,
  type Capability,
  type InspectResult,
  type JsonValue,
  type OperateResult,
  type Scope,
} from '@switchyard/plugin-sdk/protocol';
import { checkExecutable, PackageFileError, readManifestBytes } from '@switchyard/plugin-sdk/host';
import type { MethodName, MethodParams } from '@switchyard/plugin-sdk/host';
import type { AuditInput } from './audit.js';
import { discoverPackages, type DiscoveredPackage } from './discovery.js';
import {
  FingerprintChangedError,
  InvalidInputError,
  PackageInvalidError,
  PermissionDeniedError,
  PluginDisabledError,
  PluginNotFoundError,
  PluginUnavailableError,
  ProjectUntrustedError,
  ProtocolMismatchError,
  SwitchyardError,
  TrustRequiredError,
  CallCancelledError,
} from './errors.js';
import { hashExecutable } from './fingerprint.js';
import type { Keys } from './keys.js';
import { PluginStore, type HealthRecord, type HealthState, type PluginRecord } from './plugin-store.js';
import type { Project, ProjectService } from './projects.js';
import { recordCall } from './call-metrics.js';
import { inOrder } from './concurrency.js';
import { boundedMessage } from './redact.js';
import { superviseCall, type CallError, type CallOutcome, type SupervisorLimits } from './supervisor.js';

export const LOG_ENTRIES_KEPT = 1_000;

/** CLI.md's JSON shape of a plugin. */
export interface PluginView {
  id: string;
  name: string;
  version: string;
  protocolVersion: string;
  fingerprint: string | null;
  capabilities: Capability[];
  requestedScopes: Scope[];
  grantedScopes: Scope[];
  trust: PluginRecord['trust'];
  enabled: boolean;
  health: HealthState;
  available: boolean;
  error?: string;
}

/** Everything a reviewer needs (plugin show). */
export interface PluginDetail extends PluginView {
  trustedFingerprint?: string;
  trustedBy?: string;
  trustedAt?: string;
  lastError?: string;
  healthCheckedAt?: string;
  manifestPath: string;
  packageDir: string;
  executable: string;
}

export interface LogEntry {
  at: string;
  source: 'stderr' | 'host';
  line: string;
}

export interface CallOptions {
  signal?: AbortSignal;
  beforeSend?: () => Promise<void>;
  onSpawn?: (pid: number) => void;
}

export interface PluginServiceOptions {
  dataDir: string;
  /** Who acts when the service itself decides (e.g. a worker that sees tampering). */
  processActor: string;
  limits?: Partial<SupervisorLimits>;
}

const HEALTH_CACHE_MS = 2_000;

export class PluginService {
  readonly store: PluginStore;
  readonly #healthSeen = new Map<string, { record: HealthRecord; until: number }>();
  readonly pluginsDir: string;

  constructor(
    readonly redis: Redis,
    readonly keys: Keys,
    readonly projects: ProjectService,
    readonly options: PluginServiceOptions,
  ) {
    this.store = new PluginStore(redis, keys);
    this.pluginsDir = join(options.dataDir, 'plugins');
  }

  async close(): Promise<void> {
    await this.store.close();
  }

  // ---- discovery and registry -------------------------------------------------

  async refresh(actor: string): Promise<PluginView[]> {
    const found = await discoverPackages(this.pluginsDir);
    const byId = new Map<string, DiscoveredPackage>();
    for (const item of found) if (!byId.has(item.id)) byId.set(item.id, item);
    const now = new Date().toISOString();
    for (const item of byId.values()) {
      await this.store.mutate(item.id, (current) => ({
        ...reconcile(current, item, actor, now),
        value: undefined,
      }));
    }
    for (const record of await this.store.all()) {
      if (byId.has(record.id)) continue;
      await this.store.mutate(record.id, (current) => {
        if (!current || (!current.available && current.error?.startsWith('package removed')))
          return { value: undefined };
        return {
          next: { ...current, available: false, error: `package removed from ${current.packageDir}` },
          audit: [
            {
              actor,
              action: 'plugin.removed',
              target: current.id,
              detail: { packageDir: current.packageDir },
            },
          ],
          value: undefined,
        };
      });
    }
    return this.list();
  }

  async list(): Promise<PluginView[]> {
    const [records, health] = await Promise.all([this.store.all(), this.store.allHealth()]);
    return records.map((record) => toView(record, health.get(record.id) ?? { health: 'unknown' }));
  }

  async show(id: string): Promise<PluginDetail> {
    const record = await this.require(id);
    const health = await this.store.health(id);
    return {
      ...toView(record, health),
      ...(record.trustedFingerprint ? { trustedFingerprint: record.trustedFingerprint } : {}),
      ...(record.trustedBy ? { trustedBy: record.trustedBy, trustedAt: record.trustedAt } : {}),
      ...(health.lastError ? { lastError: health.lastError } : {}),
      ...(health.checkedAt ? { healthCheckedAt: health.checkedAt } : {}),
      manifestPath: record.manifestPath,
      packageDir: record.packageDir,
      executable: record.executable,
    };
  }

  async require(id: string): Promise<PluginRecord> {
    const record = await this.store.get(id);
    if (!record) throw new PluginNotFoundError(id);
    return record;
  }

  // ---- review decisions ---------------------------------------------------------

  /** Records the exact reviewed fingerprint; the plugin stays disabled. */
  async trust(id: string, fingerprint: string, actor: string): Promise<PluginView> {
    const record = await this.require(id);
    assertUsablePackage(record);
    if (fingerprint !== record.fingerprint) {
      throw new InvalidInputError(
        `fingerprint ${fingerprint} differs from the current fingerprint of ${id}; review \`plugin show ${id}\` and pass the fingerprint it prints`,
      );
    }
    // Trust only what is on disk now, not what a stale refresh saw.
    const onDisk = await this.#fingerprintOnDisk(record);
    if (onDisk !== fingerprint) {
      throw new InvalidInputError(
        `the package of ${id} changed on disk since it was discovered; run \`plugin refresh\` and review it again`,
      );
    }
    await this.store.mutate(id, (current) => {
      if (!current || current.fingerprint !== fingerprint) {
        throw new InvalidInputError(`plugin ${id} changed while it was being trusted; review it again`);
      }
      const next: PluginRecord = {
        ...current,
        trust: 'trusted',
        trustedFingerprint: fingerprint,
        trustedBy: actor,
        trustedAt: new Date().toISOString(),
        enabled: false,
        grantedScopes: [],
      };
      return {
        next,
        audit: [{ actor, action: 'plugin.trust', target: id, detail: { fingerprint } }],
        value: undefined,
      };
    });
    return this.#view(id);
  }

  /** Grants an explicit subset of the requested scopes after a successful initialize + health exchange. */
  async enable(id: string, scopes: string[], actor: string): Promise<PluginView> {
    const record = await this.require(id);
    assertUsablePackage(record);
    if (record.trust === 'untrusted') {
      throw new TrustRequiredError(
        `plugin ${id} is not trusted; review it with \`plugin show ${id}\` and trust its fingerprint first`,
      );
    }
    if (record.trust === 'changed') throw changedError(record);
    const granted = validateScopes(record, scopes);
    const fingerprint = await this.verifyOnDisk(record);
    const outcome = await this.#runCall(record, granted, 'plugin.health', {}, {});
    if (outcome.result.status === 'unhealthy') {
      throw new PluginUnavailableError(
        `plugin ${id} reports itself unhealthy${outcome.result.message ? `: ${outcome.result.message}` : ''}; not enabled`,
      );
    }
    await this.store.mutate(id, (current) => {
      if (!current || current.trust !== 'trusted' || current.trustedFingerprint !== fingerprint) {
        throw new TrustRequiredError(`plugin ${id} changed while it was being enabled; review it again`);
      }
      return {
        next: { ...current, enabled: true, grantedScopes: granted },
        audit: [{ actor, action: 'plugin.enable', target: id, detail: { scopes: granted, fingerprint } }],
        value: undefined,
      };
    });
    return this.#view(id);
  }

  /** Revokes every grant without running plugin code. */
  async disable(id: string, actor: string): Promise<PluginView> {
    await this.require(id);
    await this.store.mutate(id, (current) => {
      if (!current) throw new PluginNotFoundError(id);
      return {
        next: { ...current, enabled: false, grantedScopes: [] },
        audit: [
          { actor, action: 'plugin.disable', target: id, detail: { previousScopes: current.grantedScopes } },
        ],
        value: undefined,
      };
    });
    return this.#view(id);
  }

  // ---- supervised calls ---------------------------------------------------------

  /** One supervised health check now (the plugin must be enabled). */
  async health(id: string, options: CallOptions = {}) {
    const record = await this.authorize(id);
    return (await this.call(record, 'plugin.health', {}, options)).result;
  }

  async inspect(pluginId: string, projectId: string, options: CallOptions = {}): Promise<InspectResult> {
    const [record, project] = await inOrder(
      this.authorize(pluginId, 'project.inspect', 'project.metadata.read'),
      this.authorizeProject(projectId),
    );
    const params = { project: projectParams(project, record.grantedScopes) };
    return (await this.call(record, 'project.inspect', params, options)).result;
  }

  async operate(
    pluginId: string,
    projectId: string,
    action: string,
    input: JsonValue,
    options: CallOptions = {},
  ): Promise<OperateResult> {
    const record = await this.authorize(pluginId, 'project.operate', 'project.operate');
    const project = await this.authorizeProject(projectId);
    const params = { project: projectParams(project, record.grantedScopes), action, input };
    return (await this.call(record, 'project.operate', params, options)).result;
  }

  /** PROTOCOL §9.1: the stored state must allow the call now. */
  async authorize(id: string, capability?: Capability, scope?: Scope): Promise<PluginRecord> {
    const record = await this.require(id);
    assertUsablePackage(record);
    if (record.trust === 'untrusted') throw new TrustRequiredError(`plugin ${id} is not trusted`);
    if (record.trust === 'changed') throw changedError(record);
    if (!record.enabled)
      throw new PluginDisabledError(`plugin ${id} is disabled; enable it with the scopes it needs`);
    if (capability && !record.capabilities.includes(capability)) {
      throw new PermissionDeniedError(`plugin ${id} does not declare the capability ${capability}`);
    }
    if (scope && !record.grantedScopes.includes(scope)) {
      throw new PermissionDeniedError(`plugin ${id} has not been granted the scope ${scope}`);
    }
    return record;
  }

  async authorizeProject(projectId: string): Promise<Project> {
    const project = await this.projects.require(projectId);
    if (!project.trusted) {
      throw new ProjectUntrustedError(
        `project ${projectId} is not trusted; trust it with \`project trust ${projectId}\``,
      );
    }
    return project;
  }

  /** Verifies the package on disk, then runs one supervised call and records its outcome. */
  async call<M extends Exclude<MethodName, 'initialize'>>(
    record: PluginRecord,
    method: M,
    params: MethodParams<M>,
    options: CallOptions,
  ): Promise<CallOutcome<M>> {
    try {
      await this.verifyOnDisk(record);
    } catch (error) {
      await this.#recordFailure(record.id, error);
      throw error;
    }
    return this.#runCall(record, record.grantedScopes, method, params, options);
  }

  async #runCall<M extends Exclude<MethodName, 'initialize'>>(
    record: PluginRecord,
    grants: Scope[],
    method: M,
    params: MethodParams<M>,
    options: CallOptions,
  ): Promise<CallOutcome<M>> {
    const started = performance.now();
    const measure = (ok: boolean) =>
      recordCall(this.redis, this.keys, record.id, method, (performance.now() - started) / 1_000, ok);
    try {
      const outcome = await superviseCall({
        executablePath: join(record.packageDir, record.executable),
        arguments: record.arguments,
        packageDir: record.packageDir,
        identity: record,
        grants,
        method,
        params,
        ...(this.options.limits ? { limits: this.options.limits } : {}),
        ...(options.signal ? { signal: options.signal } : {}),
        ...(options.beforeSend ? { beforeSend: options.beforeSend } : {}),
        ...(options.onSpawn ? { onSpawn: options.onSpawn } : {}),
      });
      const status =
        method === 'plugin.health'
          ? (outcome.result as { status: HealthState }).status
          : ('healthy' as const);
      measure(true);
      await this.#recordOutcome(record.id, { health: status }, outcome.stderr);
      return outcome;
    } catch (error) {
      measure(false);
      await this.#recordFailure(record.id, error);
      throw error;
    }
  }

  /**
   * PROTOCOL §9.2 on this machine's disk: executable rules and the fingerprint
   * must equal the trusted one. A mismatch disables the plugin everywhere.
   */
  async verifyOnDisk(record: PluginRecord): Promise<string> {
    const trusted = record.trustedFingerprint;
    if (!trusted) throw new TrustRequiredError(`plugin ${record.id} is not trusted`);
    const current = await this.#fingerprintOnDisk(record);
    if (current !== trusted) {
      await this.#markChanged(record, current);
      throw new FingerprintChangedError(
        `plugin ${record.id} changed on disk (trusted ${trusted}, now ${current}); it was disabled and must be reviewed again`,
        trusted,
        current,
      );
    }
    return current;
  }

  async #fingerprintOnDisk(record: PluginRecord): Promise<string> {
    // Independent reads, issued together: this runs before every call.
    const [manifestBytes, executable] = await inOrder(
      // A refused plugin.json (FIFO, symlink, foreign owner) is a package fault like the executable's.
      readManifestBytes(record.manifestPath).catch((error: unknown) =>
        error instanceof PackageFileError ? { refused: error.message } : Promise.reject(error),
      ),
      checkExecutable(record.packageDir, record.executable),
    );
    if (manifestBytes !== undefined && 'refused' in manifestBytes) {
      await this.#markUnavailable(record, manifestBytes.refused);
      throw new PackageInvalidError(`plugin ${record.id}: ${manifestBytes.refused}; the call was refused`);
    }
    if (manifestBytes === undefined || manifestBytes.length > MAX_MANIFEST_BYTES) {
      throw new PackageInvalidError(
        `plugin ${record.id}: ${record.manifestPath} is ${manifestBytes === undefined ? 'missing' : 'larger than 64 KiB'}`,
      );
    }
    if (!executable.ok) {
      await this.#markUnavailable(record, executable.error);
      throw new PackageInvalidError(`plugin ${record.id}: ${executable.error}; the call was refused`);
    }
    const fingerprint = await hashExecutable(manifestBytes, executable.path);
    if (typeof fingerprint !== 'string') {
      await this.#markUnavailable(record, fingerprint.error);
      throw new PackageInvalidError(`plugin ${record.id}: ${fingerprint.error}; the call was refused`);
    }
    return fingerprint;
  }

  async #markChanged(record: PluginRecord, current: string): Promise<void> {
    await this.store.mutate(record.id, (latest) => {
      if (!latest || latest.trustedFingerprint !== record.trustedFingerprint || latest.trust === 'changed') {
        return { value: undefined };
      }
      return {
        next: { ...latest, trust: 'changed', enabled: false, grantedScopes: [], fingerprint: current },
        audit: [
          {
            actor: this.options.processActor,
            action: 'plugin.fingerprint-changed',
            target: record.id,
            detail: { seenBy: this.options.processActor, trusted: record.trustedFingerprint, current },
          },
        ],
        value: undefined,
      };
    });
  }

  async #markUnavailable(record: PluginRecord, error: string): Promise<void> {
    await this.store.mutate(record.id, (latest) => {
      if (!latest || (!latest.available && latest.error === error)) return { value: undefined };
      return {
        next: { ...latest, available: false, error },
        audit: [
          {
            actor: this.options.processActor,
            action: 'plugin.package-invalid',
            target: record.id,
            detail: { seenBy: this.options.processActor, error },
          },
        ],
        value: undefined,
      };
    });
  }

  // ---- health and logs ---------------------------------------------------------

  async logs(id: string, limit = 100): Promise<LogEntry[]> {
    await this.require(id);
    const raw = await this.redis.lrange(
      this.keys.pluginLogs(id),
      0,
      Math.max(0, Math.min(limit, LOG_ENTRIES_KEPT) - 1),
    );
    return raw.map((value) => JSON.parse(value) as LogEntry);
  }

  async #recordOutcome(id: string, health: HealthRecord, stderr: string[], hostLine?: string): Promise<void> {
    const at = new Date().toISOString();
    const entries: LogEntry[] = stderr.map((line) => ({ at, source: 'stderr', line }));
    if (hostLine) entries.push({ at, source: 'host', line: hostLine });
    const previous = await this.#knownHealth(id);
    const changed = previous.health !== health.health || previous.lastError !== health.lastError;
    if (!changed && entries.length === 0) return;
    this.#healthSeen.set(id, { record: health, until: Date.now() + HEALTH_CACHE_MS });
    const multi = this.redis.multi();
    if (changed || health.health !== 'healthy') {
      multi.hset(this.keys.pluginHealth, id, JSON.stringify({ ...health, checkedAt: at }));
    }
    if (entries.length > 0) {
      multi.lpush(this.keys.pluginLogs(id), ...entries.map((entry) => JSON.stringify(entry)));
      multi.ltrim(this.keys.pluginLogs(id), 0, LOG_ENTRIES_KEPT - 1);
    }
    await multi.exec();
  }

  /**
   * The stored health, read at most every HEALTH_CACHE_MS per plugin: a
   * healthy call then costs no Redis round trip for health. Another process's
   * change is seen within that time.
   */
  async #knownHealth(id: string): Promise<HealthRecord> {
    const cached = this.#healthSeen.get(id);
    if (cached && cached.until > Date.now()) return cached.record;
    const record = await this.store.health(id);
    this.#healthSeen.set(id, { record, until: Date.now() + HEALTH_CACHE_MS });
    return record;
  }

  async #recordFailure(id: string, error: unknown): Promise<void> {
    if (!recordsUnhealthy(error)) return;
    const message = boundedMessage(error instanceof Error ? error.message : String(error));
    const stderr = (error as CallError).stderr ?? [];
    await this.#recordOutcome(
      id,
      { health: 'unhealthy', lastError: message },
      stderr,
      `call failed: ${message}`,
    );
  }

  async #view(id: string): Promise<PluginView> {
    return toView(await this.require(id), await this.store.health(id));
  }
}

/** Faults of the plugin or its package record unhealthy; the caller's own authorization errors do not. */
export function recordsUnhealthy(error: unknown): boolean {
  if (!(error instanceof SwitchyardError)) return false;
  if (error instanceof CallCancelledError) return false;
  return (
    error.callFailure || error instanceof PackageInvalidError || error instanceof FingerprintChangedError
  );
}

function reconcile(
  current: PluginRecord | undefined,
  found: DiscoveredPackage,
  actor: string,
  now: string,
): { next: PluginRecord; audit: AuditInput[] } {
  const manifest = found.manifest;
  const audit: AuditInput[] = [];
  const fingerprint = found.fingerprint ?? null;
  let trust = current?.trust ?? 'untrusted';
  let enabled = current?.enabled ?? false;
  let grantedScopes = current?.grantedScopes ?? [];
  const trusted = current?.trustedFingerprint;
  if (trusted && fingerprint && fingerprint !== trusted) {
    if (current?.trust !== 'changed' || current.fingerprint !== fingerprint) {
      audit.push({
        actor,
        action: 'plugin.fingerprint-changed',
        target: found.id,
        detail: { seenBy: actor, trusted, current: fingerprint },
      });
    }
    trust = 'changed';
    enabled = false;
    grantedScopes = [];
  } else if (trusted && fingerprint === trusted && trust === 'changed') {
    // The reviewed bytes are back; grants stay revoked until enabled again.
    trust = 'trusted';
  }
  if (!current) {
    audit.push({
      actor,
      action: 'plugin.discovered',
      target: found.id,
      detail: { fingerprint, packageDir: found.packageDir },
    });
  }
  const next: PluginRecord = {
    id: found.id,
    name: manifest?.name ?? found.hints?.name ?? current?.name ?? '',
    version: manifest?.version ?? found.hints?.version ?? current?.version ?? '',
    protocolVersion:
      manifest?.protocolVersion ?? found.hints?.protocolVersion ?? current?.protocolVersion ?? '',
    capabilities: manifest?.capabilities ?? current?.capabilities ?? [],
    requestedScopes: manifest?.requestedScopes ?? current?.requestedScopes ?? [],
    executable: manifest?.executable ?? current?.executable ?? '',
    arguments: manifest?.arguments ?? [],
    packageDir: found.packageDir,
    manifestPath: found.manifestPath,
    fingerprint,
    available: found.error === undefined,
    ...(found.error === undefined ? {} : { error: found.error }),
    protocolMismatch: found.protocolMismatch,
    trust,
    ...(trusted
      ? { trustedFingerprint: trusted, trustedBy: current?.trustedBy, trustedAt: current?.trustedAt }
      : {}),
    enabled,
    grantedScopes,
    discoveredAt: now,
  };
  return { next, audit };
}

function assertUsablePackage(record: PluginRecord): void {
  if (record.protocolMismatch)
    throw new ProtocolMismatchError(record.error ?? `plugin ${record.id} speaks another protocol`);
  if (!record.available)
    throw new PluginUnavailableError(
      `plugin ${record.id} is unavailable: ${record.error ?? 'unknown reason'}`,
    );
}

function changedError(record: PluginRecord): FingerprintChangedError {
  return new FingerprintChangedError(
    `plugin ${record.id} changed since it was trusted (trusted ${record.trustedFingerprint}, now ${record.fingerprint}); review it and trust the new fingerprint`,
    record.trustedFingerprint ?? '',
    record.fingerprint ?? undefined,
  );
}

function validateScopes(record: PluginRecord, scopes: string[]): Scope[] {
  if (scopes.length === 0) {
    throw new InvalidInputError(
      `enable needs at least one scope; ${record.id} requests: ${record.requestedScopes.join(', ')}`,
    );
  }
  const unique = [...new Set(scopes)];
  for (const scope of unique) {
    if (!(SCOPES as readonly string[]).includes(scope)) {
      throw new InvalidInputError(`unknown scope ${JSON.stringify(scope)}; scopes are ${SCOPES.join(', ')}`);
    }
    if (!(record.requestedScopes as string[]).includes(scope)) {
      throw new InvalidInputError(
        `scope ${scope} was not requested by ${record.id} (it requests: ${record.requestedScopes.join(', ') || 'none'})`,
      );
    }
  }
  return unique as Scope[];
}

function projectParams(project: Project, grants: readonly Scope[]) {
  return {
    id: project.id,
    displayName: project.displayName,
    ...(grants.includes('project.files.read') ? { root: project.root } : {}),
  };
}

function toView(record: PluginRecord, health: HealthRecord): PluginView {
  return {
    id: record.id,
    name: record.name,
    version: record.version,
    protocolVersion: record.protocolVersion,
    fingerprint: record.fingerprint,
    capabilities: record.capabilities,
    requestedScopes: record.requestedScopes,
    grantedScopes: record.grantedScopes,
    trust: record.trust,
    enabled: record.enabled,
    health: health.health,
    available: record.available,
    ...(record.error ? { error: record.error } : {}),
  };
}
