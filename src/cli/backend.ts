// One implementation of each command's output, two transports underneath:
// the commands call this interface only. The local backend is the core
// services over Redis (the local OS user is the actor); the remote backend
// (remote-backend.ts) is the HTTP API (the token is the actor). Both return
// the same view objects and raise errors with the same codes and exit status.
import type { AuditEntry, AuditQuery } from '../core/audit.js';
import type { BatchDiff } from '../core/batch-diff.js';
import type { ExportFormat } from '../core/batch-export.js';
import type { BatchProgress, BatchQuery, BatchView } from '../core/batches.js';
import type { OperationQuery, OperationView } from '../core/operations.js';
import type { Page } from '../core/pages.js';
import type { PluginDetail, PluginService, PluginView } from '../core/plugins.js';
import type { AddOptions, Project } from '../core/projects.js';
import type { Runtime } from '../core/runtime.js';
import { addSchedule, removeSchedule, type ScheduleInput } from '../core/schedule-service.js';
import type { Schedule } from '../core/schedules.js';
import type { TimeLimitSettings } from '../core/time-limits.js';
import type { TokenView } from '../core/tokens.js';
import type { OperationRequest, ProjectSelection } from '../core/work.js';
import { queryAudit } from '../core/audit.js';
import { followOperationLogs, followPluginLogs } from './log-follow.js';

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
    setTimeLimits(id: string, settings: TimeLimitSettings): Promise<PluginDetail>;
  };
  projects: {
    list(): Promise<Project[]>;
    add(path: string, options: AddOptions): Promise<Project>;
    scan(dir: string, options: { trust?: boolean }): Promise<Project[]>;
    setTrusted(id: string, trusted: boolean): Promise<Project>;
    remove(id: string): Promise<Project>;
  };
  work: {
    createBatch(pluginId: string, selection: ProjectSelection): Promise<BatchView>;
    getBatch(batchId: string): Promise<BatchView>;
    listBatches(query: BatchQuery): Promise<Page<BatchView>>;
    /** Until the batch is over, or (signal aborted) as it is then. */
    followBatch(
      batchId: string,
      onProgress: (progress: BatchProgress | BatchView) => void,
      options: { pollMs?: number; signal?: AbortSignal },
    ): Promise<BatchView>;
    cancelBatch(batchId: string): Promise<BatchView>;
    retryBatch(batchId: string, options: { failedOnly: boolean }): Promise<BatchView>;
    diffBatches(fromId: string, toId: string): Promise<BatchDiff>;
    /** The export's text as it is produced (remotely: the api's streamed body); an unknown batch fails before any. */
    exportBatch(batchId: string, format: ExportFormat): Promise<AsyncIterable<string>>;
    createOperation(
      request: Omit<OperationRequest, 'input'> & { input: OperationRequest['input'] },
    ): Promise<{ operation: OperationView; created: boolean }>;
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
  schedules: {
    list(): Promise<Schedule[]>;
    add(input: ScheduleInput): Promise<Schedule>;
    remove(id: string): Promise<{ id: string; removed: true }>;
  };
  tokens: {
    list(): Promise<TokenView[]>;
    create(name: string, role: string, options: { expiresInMs?: number }): Promise<CreatedToken>;
    revoke(idOrName: string): Promise<TokenView>;
  };
}

/** The core services over Redis, acting as `actor` (the local OS user). */
export function localBackend(runtime: Runtime, actor: string): Backend {
  const { core, work, tokens } = runtime;
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
      setTimeLimits: (id, settings) => core.plugins.setTimeLimits(id, settings, actor),
    },
    projects: {
      list: () => core.projects.list(),
      add: (path, options) => core.projects.add(path, options, actor),
      scan: (dir, options) => core.projects.scan(dir, options, actor),
      setTrusted: (id, trusted) => core.projects.setTrusted(id, trusted, actor),
      remove: (id) => core.projects.remove(id, actor),
    },
    work: {
      createBatch: (pluginId, selection) => work.createBatch(pluginId, selection, actor),
      getBatch: (batchId) => work.getBatch(batchId),
      listBatches: (query) => work.listBatches(query),
      followBatch: (batchId, onProgress, options) => work.followBatch(batchId, onProgress, options),
      cancelBatch: (batchId) => work.control.cancel(batchId, actor),
      retryBatch: (batchId, options) => work.control.retry(batchId, options, actor),
      diffBatches: (fromId, toId) => work.control.diff(fromId, toId),
      exportBatch: (batchId, format) => work.control.export(batchId, format),
      createOperation: (request) => work.createOperation(request, actor),
      getOperation: (id) => work.getOperation(id),
      operationLogs: (id) => work.operationLogs(id),
      followOperationLogs: (id, print, options) => followOperationLogs(backend.work, id, print, options),
      listOperations: (query) => work.listOperations(query),
      cancelOperation: (id) => work.cancelOperation(id, actor),
      waitOperation: (id, options) => work.waitOperation(id, options),
      workersConsuming: (queue) => work.workersConsuming(queue),
    },
    audit: (query) => queryAudit(core.redis, core.keys, query),
    schedules: {
      list: () => runtime.schedules.list(),
      add: (input) => addSchedule(runtime, input, actor),
      remove: (id) => removeSchedule(runtime, id, actor),
    },
    tokens: {
      list: () => tokens.list(),
      create: (name, role, options) => tokens.create(name, role, actor, options),
      revoke: (idOrName) => tokens.revoke(idOrName, actor),
    },
  };
  return backend;
}
