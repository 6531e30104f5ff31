// /api/v1/plugins: review, trust, grants, health, time limits and logs.
import { z } from 'zod';
import { OS_TRUST_BOUNDARY_STATEMENT, SCOPE_DESCRIPTIONS } from '@switchyard/plugin-sdk/protocol';
import { redactDeep } from '../../core/safety/index.js';
import type { ApiDeps, RouteKit } from '../route-kit.js';
import * as responses from '../responses.js';
import { bodies, limitQuery } from '../schemas.js';

export function registerPluginRoutes({ route, body, query, param, actorOf }: RouteKit, { runtime }: ApiDeps) {
  const { core } = runtime;
  route('GET', '/plugins', 'viewer', 'list plugins', () => core.plugins.list(), {
    response: z.array(responses.pluginView),
  });
  route(
    'GET',
    '/plugins/:id',
    'viewer',
    'everything a reviewer needs',
    async (request) => ({
      ...(await core.plugins.show(param(request, 'id'))),
      osTrustBoundary: OS_TRUST_BOUNDARY_STATEMENT,
      scopeDescriptions: SCOPE_DESCRIPTIONS,
    }),
    { response: responses.pluginDetail },
  );
  route(
    'POST',
    '/plugins/refresh',
    'admin',
    'rediscover packages',
    async (request) => {
      body(bodies.empty, request);
      return core.plugins.refresh(actorOf(request));
    },
    { body: bodies.empty, response: z.array(responses.pluginView) },
  );
  route(
    'POST',
    '/plugins/:id/trust',
    'admin',
    'trust the exact reviewed fingerprint',
    async (request) =>
      core.plugins.trust(param(request, 'id'), body(bodies.trust, request).fingerprint, actorOf(request)),
    { body: bodies.trust, response: responses.pluginView },
  );
  route(
    'POST',
    '/plugins/:id/enable',
    'admin',
    'grant a subset of the requested scopes',
    async (request) =>
      core.plugins.enable(param(request, 'id'), body(bodies.enable, request).scopes, actorOf(request)),
    { body: bodies.enable, response: responses.pluginView },
  );
  route(
    'POST',
    '/plugins/:id/disable',
    'admin',
    'revoke every grant',
    async (request) => {
      body(bodies.empty, request);
      return core.plugins.disable(param(request, 'id'), actorOf(request));
    },
    { body: bodies.empty, response: responses.pluginView },
  );
  route(
    'POST',
    '/plugins/:id/health',
    'operator',
    'one supervised health check now',
    async (request) => {
      body(bodies.empty, request);
      return core.plugins.health(param(request, 'id'));
    },
    { body: bodies.empty, response: responses.healthResult },
  );
  route(
    'POST',
    '/plugins/:id/limits',
    'admin',
    "the host's time limits for this plugin's calls (plugin set)",
    async (request) => {
      const limits = body(bodies.timeLimits, request);
      return core.plugins.setTimeLimits(
        param(request, 'id'),
        {
          ...(limits.inspectTimeoutMs !== undefined ? { inspectMs: limits.inspectTimeoutMs } : {}),
          ...(limits.operateTimeoutMs !== undefined ? { operateMs: limits.operateTimeoutMs } : {}),
        },
        actorOf(request),
      );
    },
    { body: bodies.timeLimits, response: responses.pluginDetailCore },
  );
  // Redacted again as they are read: entries stored before a pattern existed, and
  // tokens this api knows (registered as it verified them), never reach a viewer.
  route(
    'GET',
    '/plugins/:id/logs',
    'viewer',
    'newest redacted log entries',
    async (request) =>
      redactDeep(await core.plugins.logs(param(request, 'id'), query(limitQuery, request).limit ?? 100)),
    { response: z.array(responses.logEntry) },
  );
}
