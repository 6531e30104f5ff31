// /api/v1/rollouts: create a rollout, read it and its projects, approve,
// pause, resume, cancel, retry and export it (rollout-service.ts does the work and checks
// who may: approving needs another admin, resuming past a budget an admin). Create and
// retry honour an Idempotency-Key header as POST /operations does (201 made, 200 known).
import { Readable } from 'node:stream';
import type { FastifyRequest } from 'fastify';
import { routes } from '../../core/contract/index.js';
import { withoutUndefined } from '../../core/platform/index.js';
import type { ApiDeps, RouteKit } from '../route-kit.js';

export function registerRolloutRoutes({ route }: RouteKit, { runtime }: ApiDeps) {
  const { rollouts } = runtime;
  route(
    routes.createRollout,
    async ({ body, actor }, request, reply) => {
      const { all, labels, where, advertised, projects, input, ...plan } = body;
      const { rollout, created } = await rollouts.createOnce(
        {
          ...withoutUndefined(plan),
          ...(input !== undefined ? { input: input as never } : {}),
          selection: withoutUndefined({ all, labels, where, advertised, projects }),
        },
        actor,
        requestOptions(request),
      );
      return reply.code(created ? 201 : 200).send(rollout);
    },
    { raw: true },
  );
  route(routes.listRollouts, ({ query }) => rollouts.list(withoutUndefined(query)));
  route(routes.resolveRollout, async ({ query }) => ({
    id: await rollouts.resolve(query.ref, withoutUndefined({ pluginId: query.pluginId })),
  }));
  route(routes.getRollout, ({ params }) => rollouts.get(params.id));
  route(routes.rolloutProjects, ({ params, query }) => rollouts.projects(params.id, withoutUndefined(query)));
  route(routes.approveRollout, ({ params, actor }, request) =>
    rollouts.approve(params.id, actor, requestOptions(request)),
  );
  route(routes.pauseRollout, ({ params, actor }) => rollouts.pause(params.id, actor));
  route(routes.resumeRollout, ({ params, actor }, request) =>
    rollouts.resume(params.id, actor, { admin: request.token?.role === 'admin' }),
  );
  route(routes.cancelRollout, ({ params, actor }) => rollouts.cancel(params.id, actor));
  route(
    routes.retryRollout,
    async ({ params, actor }, request, reply) => {
      const { rollout, created } = await rollouts.retryOnce(params.id, actor, requestOptions(request));
      return reply.code(created ? 201 : 200).send(rollout);
    },
    { raw: true },
  );
  route(
    routes.exportRollout,
    async ({ params, query }, _request, reply) => {
      const chunks = await rollouts.export(params.id, query.format);
      // Not returned: a reply settles when its body ends, and the time budget covers only the handler.
      reply
        .type(query.format === 'csv' ? 'text/csv; charset=utf-8' : 'application/x-ndjson; charset=utf-8')
        .send(Readable.from(chunks));
    },
    { raw: true },
  );
}

/** The Idempotency-Key header and the requesting token (the key's scope, the two-person rule's identity). */
function requestOptions(request: FastifyRequest) {
  const key = request.headers['idempotency-key'];
  return withoutUndefined({
    idempotencyKey: typeof key === 'string' ? key : undefined,
    tokenId: request.token?.id,
  });
}
