// The remote backend: every Backend call as an HTTP API request with the
// bearer token. It needs no Redis and no data dir; the API's answers are the
// same view objects the core services return locally.
import { resolve } from 'node:path';
import { NotFoundError } from '../core/platform/index.js';
import { isBatchOver, type BatchView } from '../core/work/batches/index.js';
import { isTerminal, type OperationView } from '../core/work/operations/index.js';
import type { Backend } from './backend.js';
import { untilDone } from './event-stream.js';
import type { ApiClient } from './http.js';
import { followOperationLogs, followPluginLogs } from './log-follow-output.js';

const enc = encodeURIComponent;

export function remoteBackend(api: ApiClient): Backend {
  const get = async <T>(path: string) => (await api.request<T>('GET', path)).body;
  const post = async <T>(path: string, body: unknown = {}) =>
    (await api.request<T>('POST', path, { body })).body;
  const del = async <T>(path: string) => (await api.request<T>('DELETE', path)).body;
  const query = (values: Record<string, string | number | undefined>) => {
    const params = new URLSearchParams();
    for (const [key, value] of Object.entries(values))
      if (value !== undefined) params.set(key, String(value));
    const text = params.toString();
    return text ? `?${text}` : '';
  };

  const backend: Backend = {
    mode: 'remote',
    plugins: {
      refresh: () => post('/plugins/refresh'),
      list: () => get('/plugins'),
      show: async (id) => {
        // The API adds what a browser needs to explain scopes; the CLI prints its own.
        const {
          scopeDescriptions: _descriptions,
          osTrustBoundary: _boundary,
          ...detail
        } = await get<
          Awaited<ReturnType<Backend['plugins']['show']>> & {
            scopeDescriptions?: unknown;
            osTrustBoundary?: unknown;
          }
        >(`/plugins/${enc(id)}`);
        return detail;
      },
      trust: (id, fingerprint) => post(`/plugins/${enc(id)}/trust`, { fingerprint }),
      enable: (id, scopes) => post(`/plugins/${enc(id)}/enable`, { scopes }),
      disable: (id) => post(`/plugins/${enc(id)}/disable`),
      health: (id) => post(`/plugins/${enc(id)}/health`),
      logs: (id, limit) => get(`/plugins/${enc(id)}/logs${query({ limit })}`),
      followLogs: (id, print, options) => followPluginLogs(backend.plugins.logs, id, print, options),
      setTimeLimits: (id, settings) =>
        post(`/plugins/${enc(id)}/limits`, {
          ...(settings.inspectMs !== undefined ? { inspectTimeoutMs: settings.inspectMs } : {}),
          ...(settings.operateMs !== undefined ? { operateTimeoutMs: settings.operateMs } : {}),
        }),
    },
    projects: {
      list: () => get('/projects'),
      // The API host resolves no relative path: send where it is from here.
      add: (path, options) =>
        post('/projects', {
          path: resolve(path),
          ...(options.id !== undefined ? { id: options.id } : {}),
          ...(options.name !== undefined ? { name: options.name } : {}),
          ...(options.trust !== undefined ? { trust: options.trust } : {}),
        }),
      scan: (dir, options) =>
        post('/projects/scan', {
          dir: resolve(dir),
          ...(options.trust !== undefined ? { trust: options.trust } : {}),
        }),
      setTrusted: (id, trusted) => post(`/projects/${enc(id)}/${trusted ? 'trust' : 'untrust'}`),
      remove: (id) => del(`/projects/${enc(id)}`),
    },
    work: {
      createBatch: (pluginId, selection) => post('/batches', { pluginId, projects: selection }),
      getBatch: (batchId) => get(`/batches/${enc(batchId)}`),
      listBatches: (filters) =>
        get(
          `/batches${query({ limit: filters.limit, cursor: filters.cursor, state: filters.state, pluginId: filters.pluginId })}`,
        ),
      // The api's event stream: `progress` with the counts whenever they change, `done` with the results.
      followBatch: async (batchId, onProgress, options) => {
        const done = await untilDone(
          api,
          `/batches/${enc(batchId)}/events`,
          ({ event, data }) => {
            if (event === 'progress') onProgress(JSON.parse(data) as BatchView);
          },
          {
            ...(options.signal ? { signal: options.signal } : {}),
            read: async () => {
              const batch = await backend.work.getBatch(batchId);
              if (isBatchOver(batch)) return batch;
              onProgress(batch);
              return undefined;
            },
          },
        );
        // Aborted: the batch as it is now, as the local follow answers.
        return (done as BatchView | undefined) ?? backend.work.getBatch(batchId);
      },
      cancelBatch: (batchId) => post(`/batches/${enc(batchId)}/cancel`),
      retryBatch: (batchId, options) =>
        post(`/batches/${enc(batchId)}/retry`, options.failedOnly ? { failedOnly: true } : {}),
      diffBatches: (fromId, toId) => get(`/batches/${enc(toId)}/diff${query({ from: fromId })}`),
      // Streamed as the api writes it: the same bytes local mode prints, however big the batch.
      exportBatch: (batchId, format) =>
        api.stream(`/batches/${enc(batchId)}/export${query({ format })}`, {
          accept: `${format === 'csv' ? 'text/csv' : 'application/x-ndjson'}, application/problem+json`,
        }),
      createOperation: async (request) => {
        const { status, body } = await api.request<Awaited<ReturnType<Backend['work']['getOperation']>>>(
          'POST',
          '/operations',
          {
            body: {
              pluginId: request.pluginId,
              projectId: request.projectId,
              action: request.action,
              ...(request.input !== null ? { input: request.input } : {}),
              ...(request.timeoutMs !== undefined ? { timeoutMs: request.timeoutMs } : {}),
            },
            ...(request.idempotencyKey !== undefined
              ? { headers: { 'idempotency-key': request.idempotencyKey } }
              : {}),
          },
        );
        // 202: queued now; 200: the operation this idempotency key already names.
        return { operation: body, created: status === 202 };
      },
      getOperation: (id) => get(`/operations/${enc(id)}`),
      operationLogs: (id) => get(`/operations/${enc(id)}/logs`),
      followOperationLogs: (id, print, options) => followOperationLogs(backend.work, id, print, options),
      listOperations: (filters) =>
        get(
          `/operations${query({ limit: filters.limit, cursor: filters.cursor, projectId: filters.projectId, pluginId: filters.pluginId, state: filters.state })}`,
        ),
      cancelOperation: (id) => post(`/operations/${enc(id)}/cancel`),
      // The api's event stream: `state` on each change, then `done` with the terminal view.
      waitOperation: async (id, options) => {
        const done = await untilDone(api, `/operations/${enc(id)}/events`, () => {}, {
          ...(options?.signal ? { signal: options.signal } : {}),
          read: async () => {
            const operation = await backend.work.getOperation(id);
            return isTerminal(operation.state) ? operation : undefined;
          },
        });
        // Aborted: the operation as it is now, as the local wait answers.
        return (done as OperationView | undefined) ?? backend.work.getOperation(id);
      },
      workersConsuming: async () => (await api.health())?.workers,
    },
    audit: (filters) =>
      get(
        `/audit${query({
          limit: filters.limit,
          cursor: filters.cursor,
          actor: filters.actor,
          action: filters.action,
          excludeAction: filters.excludeAction,
          target: filters.target,
          // The api takes a duration; a bare number is milliseconds.
          since: filters.withinMs,
        })}`,
      ),
    schedules: {
      list: () => get('/schedules'),
      add: (input) => post('/schedules', input),
      remove: (id) => del(`/schedules/${enc(id)}`),
    },
    tokens: {
      list: () => get('/tokens'),
      create: (name, role, options) =>
        post('/tokens', {
          name,
          role,
          ...(options.expiresInMs !== undefined ? { expiresInMs: options.expiresInMs } : {}),
        }),
      revoke: async (idOrName) => {
        const tokens = await backend.tokens.list();
        const token = tokens.find((item) => item.id === idOrName || item.name === idOrName);
        if (!token)
          throw new NotFoundError(`unknown token ${JSON.stringify(idOrName)} (token list shows them)`);
        await del(`/tokens/${enc(token.id)}`);
        return token;
      },
    },
  };
  return backend;
}
