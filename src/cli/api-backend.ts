// The one Backend: every call as a request of the api's route by the
// contract's route table (core/contract), over a Transport: HTTP with the
// bearer token (remote mode; no Redis, no data dir) or the api's routes built
// in this process (local mode, in-process-transport.ts). Each answer is parsed
// with its route's schema, so the commands get the core services' view
// objects either way, or a clear error naming the route.
import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { SCOPES } from '@switchyard/plugin-sdk/protocol';
import { InvalidInputError, withoutUndefined } from '../core/platform/index.js';
import { routes } from '../core/contract/index.js';
import { isBatchOver, type BatchView } from '../core/work/batches/index.js';
import { isTerminal } from '../core/work/operations/index.js';
import { MAX_PAGE_LIMIT, needsResolving } from '../core/redis/index.js';
import { parseWebhookEvents } from '../core/work/notify/index.js';
import { callRoute, eventData, pathOf, type CallInput } from './api-calls.js';
import type { Backend } from './backend.js';
import { ApiUnreachableError, MalformedAnswerError } from './cli-errors.js';
import { untilDone } from './event-stream.js';
import { followOperationLogs, followPluginLogs } from './log-follow-output.js';
import type { Transport } from './transport.js';

/** Tries of a request that creates a rollout, when the api could not be reached or did not answer in time. */
const CREATE_ATTEMPTS = 3;

/**
 * A request that creates (a rollout) under one fresh Idempotency-Key, sent
 * again with the same key when the api could not be reached or did not
 * answer in time: the api may have made it before the answer was lost, and
 * the same key then answers the one it made rather than making another.
 */
async function onceWithRetries<T>(send: (headers: { 'idempotency-key': string }) => Promise<T>): Promise<T> {
  const headers = { 'idempotency-key': `cli-${randomUUID()}` };
  for (let attempt = 1; ; attempt++) {
    try {
      return await send(headers);
    } catch (error) {
      if (!(error instanceof ApiUnreachableError) || attempt >= CREATE_ATTEMPTS) throw error;
      await sleep(500 * attempt);
    }
  }
}

/** Leaves out the fields not given (the query and body types are exact about optional ones). */
function given<T extends object>(value: T): { [K in keyof T]: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(value).filter(([, item]) => item !== undefined)) as never;
}

export function apiBackend(api: Transport): Backend {
  const call = async <R extends (typeof routes)[keyof typeof routes]>(route: R, input?: CallInput<R>) =>
    (await callRoute(api, route, input)).body;
  const id = (value: string) => ({ params: { id: value } });

  const backend: Backend = {
    mode: api.mode,
    plugins: {
      refresh: () => call(routes.refreshPlugins, { body: {} }),
      list: () => call(routes.listPlugins),
      show: async (pluginId) => {
        // The API adds what a browser needs to explain scopes; the CLI prints its own.
        const {
          scopeDescriptions: _descriptions,
          osTrustBoundary: _boundary,
          ...detail
        } = await call(routes.showPlugin, id(pluginId));
        return detail;
      },
      trust: (pluginId, fingerprint) => call(routes.trustPlugin, { ...id(pluginId), body: { fingerprint } }),
      enable: async (pluginId, scopes) => {
        // The route's schema would refuse an unknown scope in general terms: named as the core names it.
        const unknown = scopes.find((scope) => !(SCOPES as readonly string[]).includes(scope));
        if (unknown !== undefined)
          throw new InvalidInputError(
            `unknown scope ${JSON.stringify(unknown)}; scopes are ${SCOPES.join(', ')}`,
          );
        return call(routes.enablePlugin, { ...id(pluginId), body: { scopes: scopes as never } });
      },
      disable: (pluginId) => call(routes.disablePlugin, { ...id(pluginId), body: {} }),
      health: (pluginId) => call(routes.checkPluginHealth, { ...id(pluginId), body: {} }),
      logs: (pluginId, limit) => call(routes.pluginLogs, { ...id(pluginId), query: { limit } }),
      followLogs: (pluginId, print, options) =>
        followPluginLogs(backend.plugins.logs, pluginId, print, options),
      setPolicy: (pluginId, settings) =>
        call(routes.setPluginLimits, { ...id(pluginId), body: withoutUndefined(settings) }),
    },
    projects: {
      list: () => call(routes.listProjects),
      // The API host resolves no relative path: send where it is from here.
      add: (path, options) =>
        call(routes.addProject, { body: { path: resolve(path), ...withoutUndefined(options) } }),
      scan: (dir, options) =>
        call(routes.scanProjects, { body: { dir: resolve(dir), ...withoutUndefined(options) } }),
      setTrusted: (projectId, trusted) =>
        call(trusted ? routes.trustProject : routes.untrustProject, { ...id(projectId), body: {} }),
      addLabels: (projectId, labels) => call(routes.labelProject, { ...id(projectId), body: { labels } }),
      removeLabel: (projectId, label) => call(routes.unlabelProject, { params: { id: projectId, label } }),
      remove: (projectId) => call(routes.removeProject, id(projectId)),
    },
    work: {
      createBatch: (pluginId, selection, priority) =>
        call(routes.createBatch, {
          body: { pluginId, projects: selection, ...(priority ? { priority } : {}) },
        }),
      // A whole id needs no round trip; anything else the api resolves.
      resolveBatch: async (ref, scope = {}) =>
        !needsResolving(ref, 'batch_')
          ? ref
          : (await call(routes.resolveBatch, { query: withoutUndefined({ ref, ...scope }) })).id,
      getBatch: (batchId) => call(routes.getBatch, id(batchId)),
      listBatches: (filters) => call(routes.listBatches, { query: withoutUndefined(filters) }),
      // The api's event stream: `progress` with the counts whenever they change, `done` once it ended
      // (without the results: those are read once, from GET /batches/:id).
      followBatch: async (batchId, onProgress, options) => {
        const route = routes.batchEvents;
        const path = pathOf(route, id(batchId));
        const done = await untilDone<BatchView>(
          api,
          path,
          ({ event, data }) => {
            if (event !== 'progress') return;
            // Progress is advisory (`done`, or a GET, is the answer): a malformed one is not drawn.
            try {
              onProgress(eventData(api, route, path, event, data) as BatchView);
            } catch (error) {
              if (!(error instanceof MalformedAnswerError)) throw error;
            }
          },
          {
            signal: options.signal,
            done: (data) => eventData(api, route, path, 'done', data) as BatchView,
            read: async () => {
              const batch = await backend.work.getBatch(batchId);
              if (isBatchOver(batch)) return batch;
              onProgress(batch);
              return undefined;
            },
          },
        );
        // Ended: with its results, as the local follow answers; aborted: the batch as it is now.
        return done?.results ? done : backend.work.getBatch(batchId);
      },
      cancelBatch: (batchId) => call(routes.cancelBatch, { ...id(batchId), body: {} }),
      cancelBatches: (filter) =>
        call(routes.cancelBatches, { body: { state: 'running', ...withoutUndefined(filter) } }),
      retryBatch: (batchId, options) =>
        call(routes.retryBatch, { ...id(batchId), body: options.failedOnly ? { failedOnly: true } : {} }),
      diffBatches: (fromId, toId) => call(routes.diffBatches, { ...id(toId), query: { from: fromId } }),
      previousBatch: async (batchId) => (await call(routes.previousBatch, id(batchId))).previous?.batchId,
      projectHistory: (projectId, pluginId, limit) =>
        call(routes.projectHistory, {
          ...id(projectId),
          query: withoutUndefined({ plugin: pluginId, limit }),
        }),
      fleet: async (pluginId, query) => {
        const rows = [];
        let cursor: string | undefined;
        do {
          const page = await call(routes.pluginFacts, {
            ...id(pluginId),
            query: withoutUndefined({
              where: query.where,
              label: query.labels,
              fact: query.facts,
              limit: MAX_PAGE_LIMIT,
              cursor,
            }),
          });
          rows.push(...page.items);
          cursor = page.nextCursor;
        } while (cursor);
        return rows;
      },
      // Streamed as the api writes it: the same bytes local mode prints, however big the batch.
      exportBatch: (batchId, format) =>
        api.stream(pathOf(routes.exportBatch, { ...id(batchId), query: { format } }), {
          accept: `${format === 'csv' ? 'text/csv' : 'application/x-ndjson'}, application/problem+json`,
        }),
      createOperation: async (request) => {
        const { status, body } = await callRoute(api, routes.createOperation, {
          body: {
            pluginId: request.pluginId,
            projectId: request.projectId,
            action: request.action,
            // The CLI refused any input but one JSON object before this point.
            ...(isJsonObject(request.input) ? { input: request.input } : {}),
            ...(request.timeoutMs !== undefined ? { timeoutMs: request.timeoutMs } : {}),
          },
          ...(request.idempotencyKey !== undefined
            ? { headers: { 'idempotency-key': request.idempotencyKey } }
            : {}),
        });
        // 202: queued now; 200: the operation this idempotency key already names.
        return { operation: body, created: status === 202 };
      },
      resolveOperation: async (ref, scope = {}) =>
        !needsResolving(ref, 'op_')
          ? ref
          : (await call(routes.resolveOperation, { query: withoutUndefined({ ref, ...scope }) })).id,
      getOperation: (operationId) => call(routes.getOperation, id(operationId)),
      operationLogs: (operationId) => call(routes.operationLogs, id(operationId)),
      followOperationLogs: (operationId, print, options) =>
        followOperationLogs(backend.work, operationId, print, options),
      listOperations: (filters) => call(routes.listOperations, { query: withoutUndefined(filters) }),
      cancelOperation: (operationId) => call(routes.cancelOperation, { ...id(operationId), body: {} }),
      // The api's event stream: `state` on each change, then `done` with the terminal view.
      waitOperation: async (operationId, options) => {
        const route = routes.operationEvents;
        const path = pathOf(route, id(operationId));
        const done = await untilDone(api, path, () => {}, {
          signal: options?.signal,
          done: (data) =>
            eventData(api, route, path, 'done', data) as Awaited<
              ReturnType<typeof backend.work.getOperation>
            >,
          read: async () => {
            const operation = await backend.work.getOperation(operationId);
            return isTerminal(operation.state) ? operation : undefined;
          },
        });
        // Aborted: the operation as it is now, as the local wait answers.
        return done ?? backend.work.getOperation(operationId);
      },
      workersConsuming: (queue) => api.workersConsuming(queue),
    },
    rollouts: {
      create: ({ selection, input, ...plan }) =>
        onceWithRetries((headers) =>
          call(routes.createRollout, {
            body: {
              ...withoutUndefined(plan),
              ...withoutUndefined(selection),
              ...(isJsonObject(input) ? { input } : {}),
            },
            headers,
          }),
        ),
      resolve: async (ref, scope = {}) =>
        !needsResolving(ref, 'rollout_')
          ? ref
          : (await call(routes.resolveRollout, { query: withoutUndefined({ ref, ...scope }) })).id,
      get: (rolloutId) => call(routes.getRollout, id(rolloutId)),
      projects: async (rolloutId) => {
        const projects = [];
        let cursor: string | undefined;
        do {
          const page = await call(routes.rolloutProjects, {
            ...id(rolloutId),
            query: withoutUndefined({ limit: MAX_PAGE_LIMIT, cursor }),
          });
          projects.push(...page.items);
          cursor = page.nextCursor;
        } while (cursor);
        return projects;
      },
      list: (filters) => call(routes.listRollouts, { query: withoutUndefined(filters) }),
      approve: (rolloutId) => call(routes.approveRollout, { ...id(rolloutId), body: {} }),
      pause: (rolloutId) => call(routes.pauseRollout, { ...id(rolloutId), body: {} }),
      resume: (rolloutId) => call(routes.resumeRollout, { ...id(rolloutId), body: {} }),
      cancel: (rolloutId) => call(routes.cancelRollout, { ...id(rolloutId), body: {} }),
      retryFailed: (rolloutId) =>
        onceWithRetries((headers) =>
          call(routes.retryRollout, { ...id(rolloutId), body: { failed: true }, headers }),
        ),
      export: (rolloutId, format) =>
        api.stream(pathOf(routes.exportRollout, { ...id(rolloutId), query: { format } }), {
          accept: `${format === 'csv' ? 'text/csv' : 'application/x-ndjson'}, application/problem+json`,
        }),
    },
    audit: (filters) => call(routes.audit, { query: given(filters) }),
    queue: () => call(routes.queue, {}),
    schedules: {
      list: () => call(routes.listSchedules),
      add: (input) => call(routes.addSchedule, { body: withoutUndefined(input) }),
      edit: (idOrName, changes) =>
        call(routes.editSchedule, { ...id(idOrName), body: withoutUndefined(changes) }),
      setPaused: (idOrName, paused) =>
        call(paused ? routes.pauseSchedule : routes.resumeSchedule, { ...id(idOrName), body: {} }),
      remove: (idOrName) => call(routes.removeSchedule, id(idOrName)),
    },
    webhooks: {
      list: () => call(routes.listWebhooks),
      add: (input) =>
        call(routes.addWebhook, {
          body: withoutUndefined({ ...input, events: parseWebhookEvents(input.events) }),
        }),
      edit: (webhookId, changes) =>
        call(routes.editWebhook, {
          ...id(webhookId),
          body: withoutUndefined({
            ...changes,
            events: changes.events ? parseWebhookEvents(changes.events) : undefined,
          }),
        }),
      rotateSecret: (webhookId, secret, previousValidForMs) =>
        call(routes.rotateWebhookSecret, {
          ...id(webhookId),
          body: withoutUndefined({ secret, previousValidForMs }),
        }),
      ping: (webhookId) => call(routes.pingWebhook, { ...id(webhookId), body: {} }),
      remove: (webhookId) => call(routes.removeWebhook, id(webhookId)),
      deliveries: (webhookId) =>
        webhookId ? call(routes.webhookDeliveries, id(webhookId)) : call(routes.listDeliveries),
      delivery: (deliveryId) => call(routes.showDelivery, id(deliveryId)),
      redeliver: (deliveryId) => call(routes.redeliverDelivery, { ...id(deliveryId), body: {} }),
    },
    tokens: {
      list: () => call(routes.listTokens),
      create: (name, role, options) =>
        call(routes.createToken, { body: { name, role: role as never, ...withoutUndefined(options) } }),
      // The api looks the token up by id or name, as the local store does, and answers its view.
      revoke: async (idOrName) => {
        const { revoked: _revoked, ...token } = await call(routes.revokeToken, id(idOrName));
        return token;
      },
      teams: () => call(routes.listTeams),
      setTeam: (team, weight) => call(routes.setTeam, { params: { team }, body: { weight } }),
    },
  };
  return backend;
}

function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
