// Plugin application services: refresh, list, show, trust, enable, disable,
// health, logs, and the supervised calls (inspect, operate). Every front (CLI,
// api, worker, scheduler) goes through these; the rules they apply are in
// plugin-rules.ts, the verify-then-call pipeline in plugin-calls.ts, and
// every Redis write in plugin-store.ts.
import { hostname } from 'node:os';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import type {
  Capability,
  InspectResult,
  JsonValue,
  OperateResult,
  Scope,
} from '@switchyard/plugin-sdk/protocol';
import { discoverPackages, type DiscoveredPackage } from './discovery.js';
import {
  InvalidInputError,
  PluginNotFoundError,
  PluginUnavailableError,
  ProjectNotFoundError,
  ProjectUntrustedError,
  TrustRequiredError,
  inOrder,
  withoutUndefined,
} from '../platform/index.js';
import type { Keys } from '../redis/index.js';
import { PluginCalls, type CallOptions, type HostCallPolicy } from './plugin-calls.js';
import type { WorkerSlots } from './worker-slots.js';
import {
  assertCallAllowed,
  assertTrusted,
  assertUsablePackage,
  projectParams,
  reconcile,
  toDetail,
  toView,
  validateScopes,
  type PluginDetail,
  type PluginView,
} from './plugin-rules.js';
import { PluginStore, type LogEntry, type PluginRecord } from './plugin-store.js';
import { redactHealth, redactInspection, redactOperation, type Redacted } from './result-redaction.js';
import type { Project, ProjectService } from '../projects/index.js';
import { containment } from '../supervision/index.js';
import { redactDeep } from '../safety/index.js';
import { workerConfinement } from './confinement-report.js';
import { checkSettings, type TimeLimitSettings } from './time-limits.js';
import { checkConfinementSettings, type ConfinementSettings } from './confinement-settings.js';
import { checkRetentionSettings, retentionOf } from './retention-policy.js';
import { applyCapSettings, hasCaps, rateText, type CallCaps, type CapSettings } from './plugin-caps.js';

export type { CallOptions } from './plugin-calls.js';
export type { PluginDetail, PluginView } from './plugin-rules.js';
export { LOG_ENTRIES_KEPT, type LogEntry } from './plugin-store.js';

export interface PluginServiceOptions {
  dataDir: string;
  /** Who acts when the service itself decides (e.g. a worker that sees tampering). */
  processActor: string;
  callPolicy: HostCallPolicy;
}

export class PluginService {
  readonly #store: PluginStore;
  readonly #redis: Redis;
  readonly #keys: Keys;
  /** The verify-then-call pipeline (benchmarks measure its steps on their own). */
  readonly calls: PluginCalls;
  readonly #pluginsDir: string;

  /**
   * A worker's calls: their caps' leases last as long as its job locks (a kill -9 frees a slot
   * after about that long), and each call is shown on its slot board (`switchyard queue`).
   */
  serveAsWorker(options: { capLeaseMs: number; slots: WorkerSlots }): void {
    this.calls.caps.leaseMs = options.capLeaseMs;
    this.calls.slots = options.slots;
  }

  constructor(
    redis: Redis,
    keys: Keys,
    private readonly projects: ProjectService,
    readonly options: PluginServiceOptions,
  ) {
    this.#store = new PluginStore(redis, keys, options.processActor);
    this.#redis = redis;
    this.#keys = keys;
    this.calls = new PluginCalls(redis, keys, this.#store, {
      processActor: options.processActor,
      copiesDir: join(options.dataDir, 'run', 'packages'),
      callPolicy: options.callPolicy,
    });
    this.#pluginsDir = join(options.dataDir, 'plugins');
  }

  async close(): Promise<void> {
    await this.#store.close();
  }

  // ---- discovery and registry -------------------------------------------------

  async refresh(actor: string): Promise<PluginView[]> {
    const reviewed = new Map<string, ReadonlySet<string>>();
    for (const record of await this.#store.all())
      if (record.trustedFiles)
        reviewed.set(record.packageDir, new Set(record.trustedFiles.map((e) => e.path)));
    const found = await discoverPackages(this.#pluginsDir, (packageDir) => reviewed.get(packageDir));
    const byId = new Map<string, DiscoveredPackage>();
    for (const item of found) if (!byId.has(item.id)) byId.set(item.id, item);
    const now = new Date().toISOString();
    for (const item of byId.values()) {
      await this.#store.mutate(item.id, (current) => ({
        ...reconcile(current, item, actor, now, hostname()),
        value: undefined,
      }));
    }
    for (const record of await this.#store.all()) {
      if (byId.has(record.id)) continue;
      await this.#store.mutate(record.id, (current) => {
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
    const [records, health] = await Promise.all([this.#store.all(), this.#store.allHealth()]);
    return records.map((record) => toView(record, health.get(record.id) ?? { health: 'unknown' }));
  }

  /** Ids of the plugins that are enabled and available (health checks). */
  async enabledIds(): Promise<string[]> {
    return (await this.list())
      .filter((plugin) => plugin.enabled && plugin.available)
      .map((plugin) => plugin.id);
  }

  /** Each registered plugin's retention policy (retention-policy.ts), for the retention clean-up. */
  async retentionPolicies(): Promise<Map<string, { batches: number; days?: number }>> {
    return new Map((await this.#store.all()).map((record) => [record.id, retentionOf(record.retention)]));
  }

  async show(id: string): Promise<PluginDetail> {
    const record = await this.#require(id);
    const [health, workers] = await Promise.all([
      this.#store.health(id),
      workerConfinement(this.#redis, this.#keys),
    ]);
    return toDetail(record, health, { ...containment(), seenBy: this.options.processActor, workers });
  }

  /**
   * Admin: the host's policy for this plugin's calls — time limits, network,
   * extra read/write paths, resource limits (unset ones keep their value).
   */
  async setPolicy(id: string, settings: PluginSettings, actor: string): Promise<PluginDetail> {
    const { inspectMs, operateMs, retentionBatches, retentionDays, maxConcurrency, rate, ...confinement } =
      settings;
    const capSettings = withoutUndefined({ maxConcurrency, rate });
    // Checked before anything is written (the record's own caps are applied inside the change).
    applyCapSettings(undefined, capSettings);
    const timeSettings = withoutUndefined({ inspectMs, operateMs });
    checkSettings(timeSettings);
    const retention = checkRetentionSettings(
      withoutUndefined({ batches: retentionBatches, days: retentionDays }),
    );
    const confinementSettings = withoutUndefined(checkConfinementSettings({ ...confinement }));
    if (
      Object.keys(timeSettings).length +
        Object.keys(confinementSettings).length +
        Object.keys(retention).length +
        Object.keys(capSettings).length ===
      0
    )
      throw new InvalidInputError(`nothing to set for plugin ${id}`);
    await this.#require(id);
    await this.#store.mutate(id, (current) => {
      if (!current) throw new PluginNotFoundError(id);
      const timeLimits = { ...current.timeLimits, ...timeSettings };
      const next: PluginRecord = { ...current, timeLimits };
      if (Object.keys(retention).length > 0) next.retention = { ...current.retention, ...retention };
      if (Object.keys(capSettings).length > 0) {
        const caps = applyCapSettings(current.caps, capSettings);
        if (hasCaps(caps)) next.caps = caps;
        else delete next.caps;
      }
      if (Object.keys(confinementSettings).length > 0) {
        next.confinement = {
          ...current.confinement,
          ...confinementSettings,
          ...(confinementSettings.network ? { networkSetBy: 'admin' as const } : {}),
        };
      }
      return {
        next,
        audit: [
          {
            actor,
            action: 'plugin.set',
            target: id,
            detail: {
              ...timeLimits,
              ...(next.confinement ? { confinement: { ...next.confinement } } : {}),
              ...(next.retention ? { retention: { ...next.retention } } : {}),
              ...(Object.keys(capSettings).length > 0 ? { caps: capsDetail(next.caps) } : {}),
            },
          },
        ],
        value: undefined,
      };
    });
    return this.show(id);
  }

  async #require(id: string): Promise<PluginRecord> {
    const record = await this.#store.get(id);
    if (!record) throw new PluginNotFoundError(id);
    return record;
  }

  // ---- review decisions ---------------------------------------------------------

  /**
   * Records the exact reviewed fingerprint; the plugin stays disabled. Trusting
   * again the fingerprint it is trusted at changes nothing (an enabled plugin
   * keeps its grants; the audit records it as `unchanged`): only a new
   * fingerprint needs a new review and grant.
   */
  async trust(id: string, fingerprint: string, actor: string): Promise<PluginView> {
    const record = await this.#require(id);
    assertUsablePackage(record);
    if (fingerprint !== record.fingerprint) {
      throw new InvalidInputError(
        `fingerprint ${fingerprint} differs from the current fingerprint of ${id}; review \`plugin show ${id}\` and pass the fingerprint it prints`,
      );
    }
    // Trust only what is on disk now, not what a stale refresh saw: the fingerprint and every package file.
    const onDisk = await this.calls.fingerprintOnDisk(record);
    const tree = await this.calls.treeOnDisk(record);
    if (onDisk !== fingerprint || tree.digest !== record.treeDigest) {
      throw new InvalidInputError(
        `the package of ${id} changed on disk since it was discovered; run \`plugin refresh\` and review it again`,
      );
    }
    await this.#store.mutate(id, (current) => {
      if (!current || current.fingerprint !== fingerprint || current.treeDigest !== tree.digest) {
        throw new InvalidInputError(`plugin ${id} changed while it was being trusted; review it again`);
      }
      // The same review again: nothing changes, and the audit records who confirmed it.
      if (
        current.trust === 'trusted' &&
        current.trustedFingerprint === fingerprint &&
        current.trustedTreeDigest === tree.digest &&
        current.trustedFiles !== undefined
      )
        return {
          audit: [{ actor, action: 'plugin.trust', target: id, detail: { fingerprint, unchanged: true } }],
          value: undefined,
        };
      const next: PluginRecord = {
        ...current,
        trust: 'trusted',
        trustedFingerprint: fingerprint,
        trustedTreeDigest: tree.digest,
        trustedFiles: tree.entries,
        trustedBy: actor,
        trustedAt: new Date().toISOString(),
        changedOn: undefined,
        changedFiles: undefined,
        enabled: false,
        grantedScopes: [],
        // No network unless an admin allows it (or it was trusted before network confinement).
        confinement:
          current.confinement?.network === undefined
            ? { ...current.confinement, network: 'none', networkSetBy: 'trust-default' }
            : current.confinement,
      };
      return {
        next,
        audit: [
          {
            actor,
            action: 'plugin.trust',
            target: id,
            detail: {
              fingerprint,
              treeDigest: tree.digest,
              files: tree.entries.length,
              network: next.confinement?.network ?? 'allow',
            },
          },
        ],
        value: undefined,
      };
    });
    return this.#view(id);
  }

  /** Grants an explicit subset of the requested scopes after a successful initialize + health exchange. */
  async enable(id: string, scopes: string[], actor: string): Promise<PluginView> {
    const record = await this.#require(id);
    assertUsablePackage(record);
    assertTrusted(record);
    const granted = validateScopes(record, scopes);
    const fingerprint = await this.calls.verifyOnDisk(record);
    const outcome = await this.calls.callVerified(record, granted, 'plugin.health', {}, {});
    if (outcome.result.status === 'unhealthy') {
      throw new PluginUnavailableError(
        `plugin ${id} reports itself unhealthy${outcome.result.message ? `: ${outcome.result.message}` : ''}; not enabled`,
      );
    }
    await this.#store.mutate(id, (current) => {
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
    await this.#require(id);
    await this.#store.mutate(id, (current) => {
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
    return redactHealth((await this.calls.call(record, 'plugin.health', {}, options)).result);
  }

  // What a plugin returns is redacted here, before any caller stores or shows it (PROTOCOL §10).
  async inspect(
    pluginId: string,
    projectId: string,
    options: CallOptions = {},
  ): Promise<Redacted<InspectResult>> {
    return this.inspectWith(await this.readInspectionState(pluginId, [projectId]), projectId, options);
  }

  /** Whether `redis` is this service's own connection: Redis runs what both send in the order it was sent. */
  sharesConnection(redis: Redis): boolean {
    return redis === this.#redis;
  }

  /**
   * The stored state inspections of these projects are checked against
   * (PROTOCOL §9.1), in one round trip: a batch job reads it once for all its
   * projects, and again whenever the call-state token moved (job-call-state.ts).
   */
  async readInspectionState(pluginId: string, projectIds: string[]): Promise<InspectionState> {
    const [record, projects] = await inOrder(this.#store.get(pluginId), this.projects.getMany(projectIds));
    return {
      pluginId,
      record,
      projects: new Map(projectIds.map((id, index) => [id, projects[index]])),
    };
  }

  /**
   * One inspection checked against `state` (which the caller knows to be
   * current): the plugin's stored state, then the project's, then its root and
   * the package on this disk (plugin-calls.ts) — every check of a call.
   */
  async inspectWith(
    state: InspectionState,
    projectId: string,
    options: CallOptions = {},
  ): Promise<Redacted<InspectResult>> {
    if (!state.record) throw new PluginNotFoundError(state.pluginId);
    assertCallAllowed(state.record, 'project.inspect', 'project.metadata.read');
    const project = state.projects.get(projectId);
    if (!project) throw new ProjectNotFoundError(projectId);
    assertProjectTrusted(project);
    await this.projects.requireRoot(project);
    const params = { project: projectParams(project, state.record.grantedScopes) };
    return redactInspection((await this.calls.call(state.record, 'project.inspect', params, options)).result);
  }

  async operate(
    pluginId: string,
    projectId: string,
    action: string,
    input: JsonValue,
    options: CallOptions = {},
  ): Promise<Redacted<OperateResult>> {
    const record = await this.authorize(pluginId, 'project.operate', 'project.operate');
    const project = await this.authorizeProject(projectId);
    await this.projects.requireRoot(project);
    const params = { project: projectParams(project, record.grantedScopes), action, input };
    return redactOperation((await this.calls.call(record, 'project.operate', params, options)).result);
  }

  /** PROTOCOL §9.1: the stored state must allow the call now. */
  async authorize(id: string, capability?: Capability, scope?: Scope): Promise<PluginRecord> {
    const record = await this.#require(id);
    assertCallAllowed(record, capability, scope);
    return record;
  }

  async authorizeProject(projectId: string): Promise<Project> {
    const project = await this.projects.require(projectId);
    assertProjectTrusted(project);
    return project;
  }

  // ---- logs ---------------------------------------------------------------------

  async logs(id: string, limit = 100): Promise<LogEntry[]> {
    await this.#require(id);
    // Redacted again as they are read: entries stored before a pattern existed, and
    // tokens this process knows (the api registers them as it verifies them), never reach a reader.
    return redactDeep(await this.#store.logs(id, limit));
  }

  /** The stderr of an operation's call (and how it ended), oldest first. */
  operationLogs(operationId: string): Promise<LogEntry[]> {
    return this.#store.operationLogs(operationId);
  }

  async #view(id: string): Promise<PluginView> {
    return toView(await this.#require(id), await this.#store.health(id));
  }
}

function assertProjectTrusted(project: Project): void {
  if (!project.trusted) {
    throw new ProjectUntrustedError(
      `project ${project.id} is not trusted; trust it with \`project trust ${project.id}\``,
    );
  }
}

/** What readInspectionState read: the plugin's record and each project's (undefined: not found). */
export interface InspectionState {
  pluginId: string;
  record: PluginRecord | undefined;
  projects: Map<string, Project | undefined>;
}

/** The caps as the audit records them (`none` when cleared). */
function capsDetail(caps: CallCaps | undefined): { maxConcurrency: number | 'none'; rate: string } {
  return {
    maxConcurrency: caps?.maxConcurrency ?? 'none',
    rate: caps?.rate ? rateText(caps.rate) : 'none',
  };
}

/** What `plugin set` may change: time limits, kernel confinement, retention, caps. */
export type PluginSettings = TimeLimitSettings &
  CapSettings &
  Omit<ConfinementSettings, 'networkSetBy'> & {
    /** retention-policy.ts: keep at least this many finished batches… */
    retentionBatches?: number;
    /** …and every one younger than this many days. */
    retentionDays?: number;
  };
