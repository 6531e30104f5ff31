// One implementation of each command's output, two transports underneath:
// the commands call this interface only. The local backend is the core
// services over Redis (the local OS user is the actor); the remote backend
// (remote-backend.ts) is the HTTP API (the token is the actor). Both return
// the same view objects and raise errors with the same codes and exit status.
import {
  listTeams,
  queryAudit,
  setTeamWeight,
  type AuditEntry,
  type AuditQuery,
  type TeamView,
  type TokenView,
} from '../core/access/index.js';
import type {
  BatchDiff,
  FleetQuery,
  FleetRow,
  HistoryEntry,
  ExportFormat,
  BatchQuery,
  BatchView,
  Priority,
  ProjectSelection,
} from '../core/work/batches/index.js';
import type { OperationQuery, OperationView, OperationRequest } from '../core/work/operations/index.js';
import type { Page } from '../core/redis/index.js';
import type { PluginDetail, PluginService, PluginView, PluginSettings } from '../core/plugins/index.js';
import type { AddOptions, Project, ProjectListing, ScanOptions, ScanReport } from '../core/projects/index.js';
import type { Runtime } from '../core/runtime/index.js';
import {
  addSchedule,
  cancelBatches,
  editSchedule,
  listSchedules,
  removeSchedule,
  setSchedulePaused,
} from '../core/work/upkeep/index.js';
import type { Schedule, ScheduleChanges, ScheduleInput, ScheduleView } from '../core/work/upkeep/index.js';
import {
  addWebhook,
  listWebhooks,
  removeWebhook,
  webhookDeliveries,
  type DeliveryView,
  type WebhookInput,
  type WebhookView,
} from '../core/work/notify/index.js';
import { followOperationLogs, followPluginLogs } from './log-follow-output.js';

export type HealthAnswer = Awaited<ReturnType<PluginService['health']>>;
export type LogLine = Awaited<ReturnType<PluginService['logs']>>[number];
export type CreatedToken = TokenView & { token: string };
export type QueueName = 'inspect' | 'operate';

export interface Backend {
  readonly mode: 'local' | 'remote';
  plugins: {
    refresh(): Promise<PluginView[]>;
    list(): Promise<PluginView[]>;
    show(id: string): Promise<PluginDetail>;
    trust(id: string, fingerprint: string): Promise<PluginView>;
    enable(id: string, scopes: string[]): Promise<PluginView>;
    disable(id: string): Promise<PluginView>;
    health(id: string): Promise<HealthAnswer>;
    logs(id: string, limit: number): Promise<LogLine[]>;
    /** The newest `limit` entries oldest first, then each new one as calls write it, until `signal` aborts. */
    followLogs(
      id: string,
      print: (entries: LogLine[]) => void,
      options: { limit: number; signal?: AbortSignal },
    ): Promise<void>;
    setPolicy(id: string, settings: PluginSettings): Promise<PluginDetail>;
  };
  projects: {
    list(): Promise<ProjectListing[]>;
    add(path: string, options: AddOptions): Promise<Project>;
    scan(dir: string, options: ScanOptions): Promise<ScanReport>;
    setTrusted(id: string, trusted: boolean): Promise<Project>;
    addLabels(id: string, labels: string[]): Promise<Project>;
    /** One label per call: the api's route removes one. */
    removeLabel(id: string, label: string): Promise<Project>;
    remove(id: string): Promise<Project>;
  };
  work: {
    createBatch(pluginId: string, selection: ProjectSelection, priority?: Priority): Promise<BatchView>;
    /** The batch id `ref` names: whole, a unique prefix, latest~N (of the plugin); id-refs.ts. */
    resolveBatch(ref: string, scope?: { pluginId?: string }): Promise<string>;
    getBatch(batchId: string): Promise<BatchView>;
    listBatches(query: BatchQuery): Promise<Page<BatchView>>;
    /** Until the batch is over, or (signal aborted) as it is then. */
    followBatch(
      batchId: string,
      onProgress: (view: BatchView) => void,
      options: { signal?: AbortSignal },
    ): Promise<BatchView>;
    cancelBatch(batchId: string): Promise<BatchView>;
    /** Every running batch, or (schedule: an id or a name) those the schedule started. */
    cancelBatches(filter: { schedule?: string }): Promise<{ cancelled: BatchView[] }>;
    retryBatch(batchId: string, options: { failedOnly: boolean }): Promise<BatchView>;
    diffBatches(fromId: string, toId: string): Promise<BatchDiff>;
    /** The id of the newest batch of the same plugin created before this one. */
    previousBatch(batchId: string): Promise<string | undefined>;
    /** `project history`: the project's result in each of the plugin's kept batches, newest first. */
    projectHistory(projectId: string, pluginId: string, limit?: number): Promise<HistoryEntry[]>;
    /** The plugin's fleet: each project's latest successful result, filtered (fleet-facts.ts), by project id. */
    fleet(pluginId: string, query: FleetQuery): Promise<FleetRow[]>;
    /** The export's text as it is produced (remotely: the api's streamed body); an unknown batch fails before any. */
    exportBatch(batchId: string, format: ExportFormat): Promise<AsyncIterable<string>>;
    createOperation(
      request: Omit<OperationRequest, 'input'> & { input: OperationRequest['input'] },
    ): Promise<{ operation: OperationView; created: boolean }>;
    /** The operation id `ref` names: whole, a unique prefix, latest~N (of the plugin, the project). */
    resolveOperation(ref: string, scope?: { pluginId?: string; projectId?: string }): Promise<string>;
    getOperation(id: string): Promise<OperationView>;
    operationLogs(id: string): Promise<LogLine[]>;
    /** Its stderr as the call writes it, until the operation has ended or `signal` aborts. */
    followOperationLogs(
      id: string,
      print: (entries: LogLine[]) => void,
      options: { signal?: AbortSignal },
    ): Promise<void>;
    listOperations(query: OperationQuery): Promise<Page<OperationView>>;
    cancelOperation(id: string): Promise<OperationView>;
    /** Until the operation is terminal, or (signal aborted) as it is then. */
    waitOperation(id: string, options?: { signal?: AbortSignal }): Promise<OperationView>;
    /** How many workers consume a queue now; undefined when that cannot be known. */
    workersConsuming(queue: QueueName): Promise<number | undefined>;
  };
  audit(query: AuditQuery): Promise<Page<AuditEntry>>;
  /** Each `idOrName` is a schedule's id or its name. */
  schedules: {
    list(): Promise<ScheduleView[]>;
    add(input: ScheduleInput): Promise<Schedule>;
    edit(idOrName: string, changes: ScheduleChanges): Promise<Schedule>;
    setPaused(idOrName: string, paused: boolean): Promise<Schedule>;
    remove(idOrName: string): Promise<{ id: string; removed: true }>;
  };
  webhooks: {
    list(): Promise<WebhookView[]>;
    add(input: WebhookInput): Promise<WebhookView>;
    remove(id: string): Promise<{ id: string; removed: true }>;
    /** Newest first: every webhook's, or one's. */
    deliveries(id?: string): Promise<DeliveryView[]>;
  };
  tokens: {
    list(): Promise<TokenView[]>;
    create(
      name: string,
      role: string,
      options: { expiresInMs?: number; team?: string },
    ): Promise<CreatedToken>;
    revoke(idOrName: string): Promise<TokenView>;
    teams(): Promise<TeamView[]>;
    setTeam(team: string, weight: number): Promise<TeamView>;
  };
}

/** The core services over Redis, acting as `actor` (the local OS user). */
export function localBackend(runtime: Runtime, actor: string): Backend {
  const { core, batches, operations, tokens } = runtime;
  const backend: Backend = {
    mode: 'local',
    plugins: {
      refresh: () => core.plugins.refresh(actor),
      list: () => core.plugins.list(),
      show: (id) => core.plugins.show(id),
      trust: (id, fingerprint) => core.plugins.trust(id, fingerprint, actor),
      enable: (id, scopes) => core.plugins.enable(id, scopes, actor),
      disable: (id) => core.plugins.disable(id, actor),
      health: (id) => core.plugins.health(id),
      logs: (id, limit) => core.plugins.logs(id, limit),
      followLogs: (id, print, options) => followPluginLogs(backend.plugins.logs, id, print, options),
      setPolicy: (id, settings) => core.plugins.setPolicy(id, settings, actor),
    },
    projects: {
      list: () => core.projects.listing(),
      add: (path, options) => core.projects.add(path, options, actor),
      scan: (dir, options) => core.projects.scan(dir, options, actor),
      setTrusted: (id, trusted) => core.projects.setTrusted(id, trusted, actor),
      addLabels: (id, labels) => core.projects.addLabels(id, labels, actor),
      removeLabel: (id, label) => core.projects.removeLabels(id, [label], actor),
      remove: (id) => core.projects.remove(id, actor),
    },
    work: {
      createBatch: (pluginId, selection, priority) =>
        batches.create(pluginId, selection, actor, priority ? { priority } : {}),
      resolveBatch: (ref, scope) => batches.resolve(ref, scope),
      getBatch: (batchId) => batches.get(batchId),
      listBatches: (query) => batches.list(query),
      followBatch: (batchId, onProgress, options) => batches.follow(batchId, onProgress, options),
      cancelBatch: (batchId) => batches.cancel(batchId, actor),
      cancelBatches: (filter) => cancelBatches(runtime, filter, actor),
      retryBatch: (batchId, options) => batches.retry(batchId, options, actor),
      diffBatches: (fromId, toId) => batches.diff(fromId, toId),
      previousBatch: async (batchId) => (await batches.previous(batchId))?.batchId,
      projectHistory: (projectId, pluginId, limit) => batches.history(projectId, pluginId, limit),
      fleet: (pluginId, query) => batches.fleet(pluginId, query),
      exportBatch: (batchId, format) => batches.export(batchId, format),
      createOperation: (request) => operations.create(request, actor),
      resolveOperation: (ref, scope) => operations.resolve(ref, scope),
      getOperation: (id) => operations.get(id),
      operationLogs: (id) => operations.logs(id),
      followOperationLogs: (id, print, options) => followOperationLogs(backend.work, id, print, options),
      listOperations: (query) => operations.list(query),
      cancelOperation: (id) => operations.cancel(id, actor),
      waitOperation: (id, options) => operations.wait(id, options),
      workersConsuming: (queue) =>
        queue === 'inspect' ? batches.workersConsuming() : operations.workersConsuming(),
    },
    audit: (query) => queryAudit(core.redis, core.keys, query),
    schedules: {
      list: () => listSchedules(runtime),
      add: (input) => addSchedule(runtime, input, actor),
      edit: (idOrName, changes) => editSchedule(runtime, idOrName, changes, actor),
      setPaused: (idOrName, paused) => setSchedulePaused(runtime, idOrName, paused, actor),
      remove: (idOrName) => removeSchedule(runtime, idOrName, actor),
    },
    webhooks: {
      list: () => listWebhooks(runtime.notifier),
      add: (input) => addWebhook(runtime.notifier, input, actor),
      remove: (id) => removeWebhook(runtime.notifier, id, actor),
      deliveries: (id) => webhookDeliveries(runtime.notifier, id),
    },
    tokens: {
      list: () => tokens.list(),
      create: (name, role, options) => tokens.create(name, role, actor, options),
      revoke: (idOrName) => tokens.revoke(idOrName, actor),
      teams: () => listTeams(core.redis, core.keys),
      setTeam: (team, weight) => setTeamWeight(core.redis, core.keys, team, weight, actor),
    },
  };
  return backend;
}
