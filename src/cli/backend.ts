// What the commands call: one interface, one implementation (api-backend.ts)
// over the api's routes, two transports underneath (transport.ts): in this
// process locally (the local OS user is the actor), HTTP remotely (the token
// is the actor). Both return the same view objects and raise errors with the
// same codes and exit status.
import type { AuditEntry, AuditQuery, TeamView, TokenView } from '../core/access/index.js';
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
import type {
  RolloutExportFormat,
  RolloutProjectView,
  RolloutQuery,
  RolloutRequest,
  RolloutListItem,
  RolloutView,
} from '../core/work/rollouts/index.js';
import type { PluginDetail, PluginService, PluginView, PluginSettings } from '../core/plugins/index.js';
import type { AddOptions, Project, ProjectListing, ScanOptions, ScanReport } from '../core/projects/index.js';
import type {
  QueueView,
  Schedule,
  ScheduleChanges,
  ScheduleInput,
  ScheduleView,
} from '../core/work/upkeep/index.js';
import type {
  DeliveryRecord,
  DeliveryView,
  WebhookChanges,
  WebhookInput,
  WebhookView,
} from '../core/work/notify/index.js';
import type { QueueName } from './transport.js';

export type HealthAnswer = Awaited<ReturnType<PluginService['health']>>;
export type LogLine = Awaited<ReturnType<PluginService['logs']>>[number];
export type CreatedToken = TokenView & { token: string };
export type { QueueName } from './transport.js';

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
  rollouts: {
    create(request: RolloutRequest): Promise<RolloutView>;
    /** The rollout id `ref` names: whole, a unique prefix, latest~N (of the plugin). */
    resolve(ref: string, scope?: { pluginId?: string }): Promise<string>;
    get(id: string): Promise<RolloutView>;
    /** Every project of the rollout in wave order, with its operation and error. */
    projects(id: string): Promise<RolloutProjectView[]>;
    /** Each without its selection (get has it). */
    list(query: RolloutQuery): Promise<Page<RolloutListItem>>;
    approve(id: string): Promise<RolloutView>;
    pause(id: string): Promise<RolloutView>;
    resume(id: string): Promise<RolloutView>;
    cancel(id: string): Promise<RolloutView>;
    /** A new rollout of the failed projects. */
    retryFailed(id: string): Promise<RolloutView>;
    /** The projects as JSON lines or CSV (remotely: the api's body). */
    export(id: string, format: RolloutExportFormat): Promise<AsyncIterable<string>>;
  };
  audit(query: AuditQuery): Promise<Page<AuditEntry>>;
  /** What waits and runs, per requester, batch or operation, and worker slot (`switchyard queue`). */
  queue(): Promise<QueueView>;
  /** Each `idOrName` is a schedule's id or its name. */
  schedules: {
    list(): Promise<ScheduleView[]>;
    add(input: ScheduleInput): Promise<Schedule>;
    edit(idOrName: string, changes: ScheduleChanges): Promise<Schedule>;
    setPaused(idOrName: string, paused: boolean): Promise<Schedule>;
    remove(idOrName: string): Promise<{ id: string; removed: true; cancelledBatches: string[] }>;
  };
  webhooks: {
    list(): Promise<WebhookView[]>;
    add(input: WebhookInput): Promise<WebhookView>;
    edit(id: string, changes: WebhookChanges): Promise<WebhookView>;
    /** The old secret signs too for `previousValidForMs` (the api's default when not given). */
    rotateSecret(id: string, secret: string, previousValidForMs?: number): Promise<WebhookView>;
    ping(id: string): Promise<DeliveryRecord>;
    remove(id: string): Promise<{ id: string; removed: true }>;
    /** Newest first: every webhook's, or one's. */
    deliveries(id?: string): Promise<DeliveryView[]>;
    delivery(deliveryId: string): Promise<DeliveryRecord>;
    redeliver(deliveryId: string): Promise<DeliveryRecord>;
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
